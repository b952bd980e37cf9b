//! What moves a UnixBench score besides the machine (reference §5.6), recorded with
//! every result: which shell `/bin/sh` is, whether the locale UnixBench forces exists,
//! and how hostbench's compiled tests differ from UnixBench's gcc builds.

use serde::Serialize;
use std::process::Command;

/// The locale UnixBench 5.1.3 exports before running anything.
pub const LANG: &str = "en_US.utf8";

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Environment {
    /// What `/bin/sh` resolves to (dash on Debian/Ubuntu, bash on RHEL).
    pub shell: String,
    /// `LANG` as the tests see it.
    pub lang: String,
    /// The character map and collation that `LANG` gives (C's when it is missing).
    pub charmap: String,
    pub collate: String,
    /// Whether `en_US.utf8` is installed (UTF-8 `sort` is slower than C's).
    pub locale_installed: bool,
    /// How Dhrystone and Whetstone were compiled here, against UnixBench's builds.
    pub compiler: String,
    /// Sentences for the reader.
    pub notes: Vec<String>,
}

/// UnixBench 5.1.3's Makefile flags for the CPU tests, for the notes.
const UNIXBENCH_FLAGS: &str = "gcc -O2 -fomit-frame-pointer -fforce-addr -ffast-math";

impl Environment {
    pub fn detect() -> Environment {
        let shell = std::fs::canonicalize("/bin/sh")
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let charmap = locale_keyword("LC_CTYPE", "charmap");
        let collate = locale_keyword("LC_COLLATE", "collate-codeset");
        let locale_installed = Command::new("locale")
            .arg("-a")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout).lines().any(|l| {
                    l.eq_ignore_ascii_case("en_US.utf8") || l.eq_ignore_ascii_case("en_US.UTF-8")
                })
            })
            .unwrap_or(false);
        let compiler = format!(
            "Dhrystone and Whetstone are hostbench's own Rust code (rustc/LLVM, opt-level 3, {}), \
             UnixBench 5.1.3 builds its C with {UNIXBENCH_FLAGS}: \
             the same work per loop, a different compiler's code",
            std::env::consts::ARCH
        );
        let mut notes = vec![
            "UnixBench-style index: UnixBench 5.1.3's tests and baselines reimplemented by hostbench; \
             compare with real UnixBench results only with care"
                .to_string(),
            format!("shell tests run {shell} as /bin/sh"),
        ];
        if !locale_installed {
            notes.push(format!(
                "locale {LANG} is not installed: the shell tests ran in the C locale (faster sort than UTF-8)"
            ));
        }
        notes.push(compiler.clone());
        if super::program::execl_helper().is_none() {
            notes.push(
                "hostbench-execl is not installed next to hostbench: execl re-executes the large \
                 hostbench binary and scores lower than UnixBench's small C program would"
                    .into(),
            );
        }
        Environment {
            shell,
            lang: LANG.into(),
            charmap,
            collate,
            locale_installed,
            compiler,
            notes,
        }
    }

    /// UnixBench's `Language:` line: `en_US.utf8 (charmap="UTF-8", collate="UTF-8")`.
    pub fn language_line(&self) -> String {
        format!(
            "{} (charmap={}, collate={})",
            self.lang, self.charmap, self.collate
        )
    }
}

/// The value of `keyword` in `locale -k category` under UnixBench's LANG, quoted as
/// `locale` prints it.
fn locale_keyword(category: &str, keyword: &str) -> String {
    Command::new("locale")
        .args(["-k", category])
        .env("LANG", LANG)
        .env_remove("LC_ALL")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{keyword}=")).map(str::to_string))
        })
        .unwrap_or_else(|| "unknown".into())
}
