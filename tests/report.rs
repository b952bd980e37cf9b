//! `hostbench report`: a JSON result, stored runs or a comparison of them become one
//! self-contained HTML page whose charts a browser really draws — checked in
//! headless Chromium (Debian's `chromium`, which scripts/test.sh installs) by looking
//! for the charts' colours in a screenshot.

mod common;
use common::*;
use std::path::Path;

/// The screenshot as rows of RGB pixels.
fn pixels(png_path: &Path) -> Vec<Vec<[u8; 3]>> {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "a colour screenshot");
    buf[..info.buffer_size()]
        .chunks(info.line_size)
        .map(|row| {
            row.chunks(channels)
                .take(info.width as usize)
                .map(|p| [p[0], p[1], p[2]])
                .collect()
        })
        .collect()
}

fn near(p: [u8; 3], colour: [u8; 3]) -> bool {
    p.iter()
        .zip(colour)
        .all(|(a, b)| (*a as i32 - b as i32).abs() < 40)
}

/// Pixels close to `colour` (the first series colour is #1f77b4).
fn colour_pixels(png_path: &Path, colour: [u8; 3]) -> usize {
    pixels(png_path)
        .iter()
        .flatten()
        .filter(|p| near(**p, colour))
        .count()
}

fn chart_pixels(png_path: &Path) -> usize {
    colour_pixels(png_path, BLUE)
}

const BLUE: [u8; 3] = [0x1f, 0x77, 0xb4];
const RED: [u8; 3] = [0xd6, 0x27, 0x28];

/// Solid blocks of `colour` at least `w` wide and `h` high: bars, not lines (a line
/// is 2 px thick) and not the 12 px colour keys.
fn solid_blocks(png_path: &Path, colour: [u8; 3], w: usize, h: usize) -> usize {
    let rows = pixels(png_path);
    let width = rows.first().map_or(0, |r| r.len());
    // Per pixel, how many matching pixels end at it in its row.
    let runs: Vec<Vec<usize>> = rows
        .iter()
        .map(|row| {
            let mut run = 0;
            row.iter()
                .map(|p| {
                    run = if near(*p, colour) { run + 1 } else { 0 };
                    run
                })
                .collect()
        })
        .collect();
    let mut blocks = 0;
    for x in 0..width {
        let mut tall = 0;
        for row in &runs {
            // Count each block once: at its first column wide enough, its h-th row.
            if row[x] == w {
                tall += 1;
                if tall == h {
                    blocks += 1;
                }
            } else if row[x] < w {
                tall = 0;
            }
        }
    }
    blocks
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
            "--window-size=900,2400",
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
        "--time",
        "2s",
        "--warmup",
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
    // The test names the section; each metric's kind is its thread count (disk
    // metrics carry no variant, so a fio job and the native test share rows).
    assert!(
        stdout(&out).contains("## disk · randread")
            && stdout(&out).contains("| read iops | 1 thread |"),
        "{}",
        stdout(&out)
    );
    // Bad input is named.
    let out = run(&["report", "--input", html.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a hostbench JSON result"));

    if !have("chromium") {
        missing(
            "chromium (for the browser check)",
            "scripts/test.sh installs it (Debian: chromium)",
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

/// The page without its SVG: colours that remain come from the text, not the charts.
fn without_svg(page: &str) -> String {
    let mut s = page.to_string();
    while let (Some(a), Some(b)) = (s.find("<svg"), s.find("</svg>")) {
        s.replace_range(a..b + 6, "");
    }
    s
}

#[test]
fn stored_runs_and_a_comparison_become_pages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("results.db");
    // A has two runs (repeats: mean ± σ), B one.
    for provider in ["a", "b", "a"] {
        let out = with_db(
            &db,
            &[
                "cpu",
                "--threads",
                "1",
                "--events",
                "300",
                "--time=0",
                "--label",
                &format!("provider={provider}"),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }

    // One run, as a page and as Markdown.
    let page = d.join("run.html");
    let out = with_db(&db, &["report", "1", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Run 1 · hostbench cpu"), "{html}");
    assert!(
        html.contains("<span class=\"chip\">provider=a</span>"),
        "{html}"
    );
    assert!(html.contains("Latency (µs) by percentile"), "{html}");
    let md = stdout(&with_db(&db, &["report", "--last", "--format", "markdown"]));
    assert!(md.contains("## Run 3 · hostbench cpu"), "{md}");
    assert!(md.contains("| events per second |"), "{md}");
    // A label selects every run that has it.
    let md = stdout(&with_db(
        &db,
        &["report", "label:provider=a", "--format", "markdown"],
    ));
    assert!(md.contains("## Run 1 ") && md.contains("## Run 3 "), "{md}");
    assert!(!md.contains("## Run 2 "), "{md}");

    // The comparison: the same figures `hostbench compare` prints.
    let groups = ["label:provider=a", "label:provider=b"];
    let cmp_json = with_db(&db, &["compare", groups[0], groups[1], "--json"]);
    assert!(cmp_json.status.success(), "{}", stderr(&cmp_json));
    let cmp: serde_json::Value = serde_json::from_slice(&cmp_json.stdout).unwrap();
    let eps = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "events_per_sec")
        .expect("events/s compared");
    let ratio = eps["ratios"][1]["ratio"].as_f64().unwrap();
    let verdict = eps["ratios"][1]["verdict"].as_str().unwrap().to_string();
    let md = stdout(&with_db(
        &db,
        &[
            "report",
            "--compare",
            groups[0],
            groups[1],
            "--format",
            "markdown",
        ],
    ));
    let row = md
        .lines()
        .find(|l| l.contains("| events per second |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains(&format!("{ratio:.2} ± ")), "{row}");
    assert!(row.contains(&format!("x {verdict} |")), "{row}");
    assert!(md.contains("| cpu |"), "the per-area summary: {md}");

    let page = d.join("compare.html");
    let out = with_db(
        &db,
        &[
            "report",
            "--compare",
            groups[0],
            groups[1],
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Per metric") && html.contains("Summary"),
        "{html}"
    );
    assert!(html.contains(&format!("{ratio:.2} ± ")), "{html}");
    for fetch in ["src=\"http", "href=\"http", "@import", "url("] {
        assert!(!html.contains(fetch), "{fetch}");
    }

    if !have("chromium") {
        missing(
            "chromium (for the browser check)",
            "scripts/test.sh installs it (Debian: chromium)",
        );
        return;
    }
    let shot = d.join("compare.png");
    assert!(screenshot(&page, &shot), "chromium made no screenshot");
    let bare = d.join("compare-bare.html");
    std::fs::write(&bare, without_svg(&html)).unwrap();
    let bare_shot = d.join("compare-bare.png");
    assert!(screenshot(&bare, &bare_shot));
    // A's bars are blue, B's red: solid blocks of both, none without the SVG.
    for (name, colour) in [("A (blue)", BLUE), ("B (red)", RED)] {
        let bars = solid_blocks(&shot, colour, 40, 10);
        assert!(bars >= 2, "{bars} bars of {name} in the screenshot");
        assert_eq!(solid_blocks(&bare_shot, colour, 40, 10), 0, "{name}");
        assert!(
            colour_pixels(&bare_shot, colour) < 50,
            "{name} outside the charts"
        );
    }
}
