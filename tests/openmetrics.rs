//! `--format openmetrics` (report and export) checked by a parser written from the
//! OpenMetrics 1.0 text format (its ABNF and the rules beside it), and, when Debian's
//! `prometheus` package is installed, by `promtool check metrics` too (the parser
//! node_exporter's textfile collector shares).

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
struct Family {
    kind: Option<String>,
    unit: Option<String>,
    help: Option<String>,
    samples: Vec<(BTreeMap<String, String>, f64)>,
}

fn metric_name_ok(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn label_name_ok(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An escaped-string up to (not including) an unescaped `"`, or to the end when
/// `quoted` is false. Returns the unescaped text and the rest after the quote.
fn escaped(s: &str, quoted: bool) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, '\\')) => out.push('\\'),
                Some((_, '"')) => out.push('"'),
                Some((_, 'n')) => out.push('\n'),
                other => return Err(format!("bad escape \\{:?}", other.map(|o| o.1))),
            },
            '"' if quoted => return Ok((out, &s[i + 1..])),
            '"' => return Err("unescaped quote".into()),
            '\n' => return Err("newline in a string".into()),
            c => out.push(c),
        }
    }
    if quoted {
        Err("unterminated label value".into())
    } else {
        Ok((out, ""))
    }
}

fn number(s: &str) -> Result<f64, String> {
    match s.to_ascii_lowercase().as_str() {
        "nan" => return Ok(f64::NAN),
        "+inf" | "+infinity" | "inf" | "infinity" => return Ok(f64::INFINITY),
        "-inf" | "-infinity" => return Ok(f64::NEG_INFINITY),
        _ => {}
    }
    // realnumber: [sign] digits [. digits] [e [sign] digits] (or .digits).
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && s.chars().any(|c| c.is_ascii_digit());
    s.parse::<f64>()
        .ok()
        .filter(|_| ok)
        .ok_or_else(|| format!("not a number: {s:?}"))
}

/// Parses OpenMetrics text; every rule broken is an error naming the line.
fn parse(text: &str) -> Result<Vec<(String, Family)>, String> {
    let body = text
        .strip_suffix("# EOF\n")
        .or_else(|| text.strip_suffix("# EOF"))
        .ok_or("does not end with # EOF")?;
    let mut families: Vec<(String, Family)> = Vec::new();
    let mut closed: BTreeSet<String> = BTreeSet::new();
    for (n, line) in body.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if line.is_empty() {
            return Err(at("empty line".into()));
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let (keyword, rest) = rest
                .split_once(' ')
                .ok_or_else(|| at("bad comment".into()))?;
            let (name, value) = rest.split_once(' ').unwrap_or((rest, ""));
            if !metric_name_ok(name) {
                return Err(at(format!("bad family name {name:?}")));
            }
            // A descriptor opens a family unless it belongs to the current one, which
            // must not have samples yet.
            let current = families.last().filter(|f| f.0 == name);
            match current {
                Some(f) if !f.1.samples.is_empty() => {
                    return Err(at("descriptor after the family's samples".into()));
                }
                Some(_) => {}
                None => {
                    if let Some(prev) = families.last() {
                        closed.insert(prev.0.clone());
                    }
                    if closed.contains(name) || families.iter().any(|f| f.0 == name) {
                        return Err(at(format!("family {name} appears twice")));
                    }
                    families.push((name.to_string(), Family::default()));
                }
            }
            let family = &mut families.last_mut().unwrap().1;
            match keyword {
                "TYPE" => {
                    const TYPES: [&str; 8] = [
                        "counter",
                        "gauge",
                        "histogram",
                        "gaugehistogram",
                        "stateset",
                        "info",
                        "summary",
                        "unknown",
                    ];
                    if !TYPES.contains(&value) {
                        return Err(at(format!("unknown type {value:?}")));
                    }
                    if family.kind.replace(value.into()).is_some() {
                        return Err(at("second TYPE".into()));
                    }
                }
                "HELP" => {
                    let (help, _) = escaped(value, false).map_err(at)?;
                    if family.help.replace(help).is_some() {
                        return Err(at("second HELP".into()));
                    }
                }
                "UNIT" => {
                    if !value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                    {
                        return Err(at("bad unit".into()));
                    }
                    if !value.is_empty() && !name.ends_with(&format!("_{value}")) {
                        return Err(at(format!("unit {value} is not the name's suffix")));
                    }
                    if family.unit.replace(value.into()).is_some() {
                        return Err(at("second UNIT".into()));
                    }
                }
                _ => return Err(at(format!("unknown descriptor {keyword}"))),
            }
            continue;
        }
        if line.starts_with('#') {
            return Err(at("a comment that is not TYPE, HELP, UNIT or EOF".into()));
        }
        // A sample: name [labels] SP value [SP timestamp].
        let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
        let name = &line[..name_end];
        if !metric_name_ok(name) {
            return Err(at(format!("bad metric name {name:?}")));
        }
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(r) = rest.strip_prefix('{') {
            rest = r;
            loop {
                if let Some(r) = rest.strip_prefix('}') {
                    rest = r;
                    break;
                }
                let (lname, r) = rest
                    .split_once("=\"")
                    .ok_or_else(|| at("bad label".into()))?;
                if !label_name_ok(lname) {
                    return Err(at(format!("bad label name {lname:?}")));
                }
                let (value, r) = escaped(r, true).map_err(at)?;
                if labels.insert(lname.to_string(), value).is_some() {
                    return Err(at(format!("label {lname} twice")));
                }
                rest = r.strip_prefix(',').unwrap_or(r);
                if !r.starts_with(',') && !r.starts_with('}') {
                    return Err(at("labels not separated by commas".into()));
                }
            }
        }
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| at("no space before the value".into()))?;
        let mut parts = rest.split(' ');
        let value = number(parts.next().unwrap_or("")).map_err(at)?;
        if let Some(ts) = parts.next() {
            number(ts).map_err(at)?;
        }
        if parts.next().is_some() {
            return Err(at("trailing text (exemplars are not expected)".into()));
        }
        // Which family the sample belongs to: a gauge's samples carry its name.
        let belongs = families.last().is_some_and(|f| {
            let kind = f.1.kind.as_deref().unwrap_or("unknown");
            match kind {
                "counter" => name == format!("{}_total", f.0) || name == format!("{}_created", f.0),
                "gauge" | "unknown" | "stateset" => name == f.0,
                _ => name.starts_with(&f.0),
            }
        });
        if !belongs {
            if let Some(prev) = families.last() {
                closed.insert(prev.0.clone());
            }
            if closed.contains(name) || families.iter().any(|f| f.0 == name) {
                return Err(at(format!("samples of {name} are not together")));
            }
            families.push((name.to_string(), Family::default()));
        }
        let family = &mut families.last_mut().unwrap().1;
        if family.samples.iter().any(|(l, _)| *l == labels) {
            return Err(at("the same labels twice in one family".into()));
        }
        family.samples.push((labels, value));
    }
    Ok(families)
}

#[test]
fn the_checker_refuses_what_the_spec_forbids() {
    let good = "# TYPE a gauge\n# UNIT a_seconds seconds\n# TYPE a_seconds gauge\na_seconds{x=\"1\"} 2\n# EOF\n";
    // (descriptors of `a` with no samples are fine: a family may be empty)
    assert!(parse(good).is_ok(), "{:?}", parse(good));
    for (bad, why) in [
        ("# TYPE a gauge\na 1\n", "no EOF"),
        ("# TYPE a gauge\na 1\n\n# EOF\n", "empty line"),
        (
            "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n# EOF\n",
            "duplicate labels",
        ),
        (
            "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n# EOF\n",
            "interleaved",
        ),
        ("# TYPE a gauge\n# TYPE a gauge\na 1\n# EOF\n", "two TYPEs"),
        (
            "# TYPE a_bytes gauge\n# UNIT a_bytes seconds\na_bytes 1\n# EOF\n",
            "unit",
        ),
        ("# TYPE a-b gauge\na-b 1\n# EOF\n", "name"),
        ("# TYPE a gauge\na{x=\"a\\t\"} 1\n# EOF\n", "escape"),
        ("# TYPE a gauge\na{x=\"a\"\"} 1\n# EOF\n", "quote"),
        (
            "# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n# EOF\n",
            "label twice",
        ),
        ("# TYPE a gauge\na{1x=\"1\"} 1\n# EOF\n", "label name"),
        ("# TYPE a gauge\na abc\n# EOF\n", "value"),
        ("# TYPE a gauge\na 1\n# a comment\n# EOF\n", "comment"),
        ("# TYPE a gaug\na 1\n# EOF\n", "type"),
        (
            "# TYPE a gauge\na 1\n# HELP a late\n# EOF\n",
            "descriptor after samples",
        ),
    ] {
        assert!(parse(bad).is_err(), "accepted ({why}): {bad}");
    }
}

/// `promtool check metrics` on the text, when Debian's prometheus package is there.
fn promtool_agrees(text: &str) {
    if !have("promtool") {
        missing(
            "promtool (for the check of the text)",
            "scripts/test.sh installs it (Debian: prometheus)",
        );
        return;
    }
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}\n{text}",
        stdout(&out),
        stderr(&out)
    );
}

fn gauges(families: &[(String, Family)]) -> BTreeMap<&str, &Family> {
    for (name, f) in families {
        assert_eq!(f.kind.as_deref(), Some("gauge"), "{name}");
        assert!(f.help.as_deref().is_some_and(|h| !h.is_empty()), "{name}");
        assert!(!f.samples.is_empty(), "{name} has no samples");
    }
    families.iter().map(|(n, f)| (n.as_str(), f)).collect()
}

#[test]
fn stored_runs_as_openmetrics() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let tricky = "a \"quoted\" back\\slash";
    let out = with_db(
        &db,
        &[
            "cpu",
            "--threads",
            "1",
            "--events",
            "40",
            "--time=0",
            "--label",
            &format!("note={tricky}"),
            "--label",
            "instance-type=c6i.large",
            "--label",
            "host=from-the-user",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let scratch = tempfile::tempdir_in(".").unwrap();
    let out = with_db(
        &db,
        &[
            "disk",
            "--dir",
            scratch.path().to_str().unwrap(),
            "--size",
            "8M",
            "--tests",
            "randread,seqwrite",
            "--time",
            "300ms",
            "--warmup",
            "0s",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = with_db(
        &db,
        &[
            "memory", "--mode", "latency", "--sizes", "16K,64K", "--time", "50ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // One run from `report`.
    let out = with_db(&db, &["report", "1", "--format", "openmetrics"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let families = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let by_name = gauges(&families);
    let eps = by_name
        .get("hostbench_cpu_events_per_second")
        .unwrap_or_else(|| panic!("no events/s in\n{text}"));
    let (labels, value) = &eps.samples[0];
    assert!(*value > 0.0);
    assert_eq!(labels["run"], "1");
    assert_eq!(labels["threads"], "1");
    assert_eq!(labels["note"], tricky, "a label value round-trips");
    assert_eq!(labels["instance_type"], "c6i.large");
    assert_eq!(labels["label_host"], "from-the-user");
    assert!(!labels["host"].is_empty());
    // Latency in seconds, with its unit.
    let lat = by_name
        .iter()
        .find(|(n, _)| n.starts_with("hostbench_cpu_latency_p") && n.ends_with("_seconds"))
        .unwrap_or_else(|| panic!("no latency in seconds in\n{text}"))
        .1;
    assert_eq!(lat.unit.as_deref(), Some("seconds"));
    assert!(lat.samples[0].1 > 0.0 && lat.samples[0].1 < 10.0);
    promtool_agrees(&text);

    // Every run from `export`: the families stay together across runs.
    let out = with_db(&db, &["export", "--format", "openmetrics"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let families = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let by_name = gauges(&families);
    let read = by_name
        .get("hostbench_disk_read_ops_per_second")
        .unwrap_or_else(|| panic!("no disk read ops in\n{text}"));
    assert_eq!(read.samples[0].0["test"], "randread");
    assert_eq!(read.samples[0].0["run"], "2");
    let load = by_name
        .get("hostbench_memory_load_latency_seconds")
        .unwrap_or_else(|| panic!("no memory latency in\n{text}"));
    assert!(load.samples.len() >= 2, "one per working-set size");
    assert!(load.samples[0].0.contains_key("working_set_bytes"));
    let runs: BTreeSet<&str> = by_name["hostbench_cpu_elapsed_seconds"]
        .samples
        .iter()
        .map(|(l, _)| l["run"].as_str())
        .collect();
    assert_eq!(runs.into_iter().collect::<Vec<_>>(), ["1"]);
    promtool_agrees(&text);

    // Written with -o: atomically (nothing beside it), and from a JSON file too.
    let file = dir.path().join("hostbench.prom");
    std::fs::write(&file, "old").unwrap();
    let out = with_db(
        &db,
        &[
            "report",
            "--last",
            "--format",
            "openmetrics",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(parse(&written).is_ok());
    assert!(
        written.contains("hostbench_memory_"),
        "--last is the memory run"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let json = with_db(&db, &["show", "1", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let input = dir.path().join("cpu.json");
    std::fs::write(&input, doc["outcomes"][0].to_string()).unwrap();
    let out = hostbench()
        .args([
            "report",
            "--input",
            input.to_str().unwrap(),
            "--format",
            "openmetrics",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let families = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let by_name = gauges(&families);
    assert!(
        !by_name["hostbench_cpu_events_per_second"].samples[0]
            .0
            .contains_key("run"),
        "a file has no run id"
    );
}
