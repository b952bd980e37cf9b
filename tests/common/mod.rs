#![allow(dead_code)]

use std::process::{Command, Output};

pub fn hostbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hostbench"))
}

pub fn run(args: &[&str]) -> Output {
    hostbench().args(args).output().expect("hostbench runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The number after `label` on the first line that contains it.
pub fn number_after(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no line with {label:?} in:\n{text}"));
    let rest = &line[line.find(label).unwrap() + label.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in {line:?}"))
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
