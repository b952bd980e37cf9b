//! `hostbench report`: a JSON result becomes one self-contained HTML page whose
//! charts a browser really draws — checked in headless Chromium (Debian's
//! `chromium`, which scripts/test.sh installs) by looking for the charts' line colour
//! in a screenshot.

mod common;
use common::*;
use std::path::Path;

/// Pixels close to the first series colour (#1f77b4) in a PNG screenshot.
fn chart_pixels(png_path: &Path) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| {
            channels >= 3
                && (p[0] as i32 - 0x1f).abs() < 40
                && (p[1] as i32 - 0x77).abs() < 40
                && (p[2] as i32 - 0xb4).abs() < 40
        })
        .count()
}

fn screenshot(html: &Path, png: &Path) -> bool {
    let status = std::process::Command::new("timeout")
        .args([
            "60",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--screenshot={}", png.display()),
            "--window-size=900,1600",
            &format!("file://{}", html.display()),
        ])
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    status.success() && png.exists()
}

#[test]
fn report_draws_its_charts_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let result = d.join("disk.json");
    let out = run(&[
        "disk",
        "--dir",
        d.to_str().unwrap(),
        "--size",
        "16M",
        "--tests",
        "randread",
        "--runtime",
        "2s",
        "--ramp",
        "200ms",
        "--no-save",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&result, &out.stdout).unwrap();
    let html = d.join("report.html");
    let out = run(&[
        "report",
        "--input",
        result.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("Timeline"), "{page}");
    // Markdown carries the same figures.
    let out = run(&[
        "report",
        "--input",
        result.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert!(
        stdout(&out).contains("| read iops | randread |"),
        "{}",
        stdout(&out)
    );
    // Bad input is named.
    let out = run(&["report", "--input", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a hostbench JSON result"));

    if !have("chromium") {
        eprintln!(
            "skipped the browser check: chromium is not installed (scripts/test.sh installs it)"
        );
        return;
    }
    let with_charts = d.join("with.png");
    assert!(
        screenshot(&html, &with_charts),
        "chromium made no screenshot"
    );
    // The same page without its SVG: the colour must come from the charts.
    let bare = d.join("bare.html");
    let stripped: String = {
        let mut s = page.clone();
        while let (Some(a), Some(b)) = (s.find("<svg"), s.find("</svg>")) {
            s.replace_range(a..b + 6, "");
        }
        s
    };
    std::fs::write(&bare, stripped).unwrap();
    let without_charts = d.join("without.png");
    assert!(screenshot(&bare, &without_charts));
    let (with, without) = (chart_pixels(&with_charts), chart_pixels(&without_charts));
    assert!(
        with > 500,
        "only {with} chart-coloured pixels in the screenshot"
    );
    assert!(
        without < 50,
        "{without} chart-coloured pixels without charts"
    );
}
