//! fio job files: INI sections (`[global]` and jobs), `key=value` or bare `key`
//! lines, `;`/`#` comments, `include FILE`, and `${VAR}`, `$ncpus`, `$pagesize`,
//! `$mb_memory` in values. Text after a section's `]` counts as an option line
//! (one vendor guide writes `[read4k-rand] stonewall`).
//!
//! The parser only builds sections; what the keys mean is `options.rs`'s business.
//! It never panics, whatever bytes it is fed.

pub use super::error::JobFileError;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: Option<String>,
    /// Where it was written, for error messages: `file:line` or `command line`.
    pub origin: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Nested includes deeper than this are a loop, not a job file.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Reads and parses a job file.
pub fn read(path: &Path) -> Result<Vec<Section>, JobFileError> {
    let mut sections = Vec::new();
    read_into(path, &mut sections, 0)?;
    Ok(sections)
}

fn read_into(path: &Path, sections: &mut Vec<Section>, depth: usize) -> Result<(), JobFileError> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(JobFileError::TooDeep {
            path: path.to_path_buf(),
            max: MAX_INCLUDE_DEPTH,
        });
    }
    let bytes = std::fs::read(path).map_err(|source| JobFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    parse_into(&text, path, sections, depth)
}

/// Parses job-file text; `path` names it in errors and anchors relative includes.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Section>, JobFileError> {
    let mut sections = Vec::new();
    parse_into(text, path, &mut sections, 0)?;
    Ok(sections)
}

fn parse_into(
    text: &str,
    path: &Path,
    sections: &mut Vec<Section>,
    depth: usize,
) -> Result<(), JobFileError> {
    // Included files hold options only, for the section they are included in.
    let in_include = depth > 0;
    for (n, raw) in text.lines().enumerate() {
        let origin = format!("{}:{}", path.display(), n + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            if in_include {
                return Err(JobFileError::SectionInInclude {
                    origin,
                    line: line.into(),
                });
            }
            let (name, after) = rest.split_once(']').ok_or_else(|| JobFileError::Unclosed {
                origin: origin.clone(),
                line: line.into(),
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(JobFileError::NoSectionName { origin });
            }
            sections.push(Section {
                name: name.to_string(),
                entries: Vec::new(),
            });
            let after = after.trim();
            if !after.is_empty() && !after.starts_with(';') && !after.starts_with('#') {
                let entry = entry(after, &origin)?;
                sections
                    .last_mut()
                    .expect("just pushed")
                    .entries
                    .push(entry);
            }
            continue;
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            let file = Path::new(file.trim());
            let file = if file.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(file)
            } else {
                file.to_path_buf()
            };
            if sections.is_empty() {
                return Err(JobFileError::IncludeFirst { origin });
            }
            let mut inner = vec![Section {
                name: String::new(),
                entries: Vec::new(),
            }];
            read_into(&file, &mut inner, depth + 1)?;
            let entries = inner.pop().map(|s| s.entries).unwrap_or_default();
            sections
                .last_mut()
                .expect("checked above")
                .entries
                .extend(entries);
            continue;
        }
        let e = entry(line, &origin)?;
        match sections.last_mut() {
            Some(s) => s.entries.push(e),
            None => {
                return Err(JobFileError::BeforeSection {
                    origin,
                    line: line.into(),
                });
            }
        }
    }
    Ok(())
}

/// `key=value`, `key = value` or a bare `key`.
fn entry(line: &str, origin: &str) -> Result<Entry, JobFileError> {
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim(), Some(expand(v.trim(), origin)?)),
        None => (line.trim(), None),
    };
    if key.is_empty() {
        return Err(JobFileError::NoKey {
            origin: origin.into(),
            line: line.into(),
        });
    }
    Ok(Entry {
        key: key.to_string(),
        value,
        origin: origin.to_string(),
    })
}

/// Expands `${VAR}` (empty when unset) and fio's keywords `$ncpus`, `$pagesize`,
/// `$mb_memory`. Arithmetic in parentheses is not implemented and says so.
pub fn expand(value: &str, origin: &str) -> Result<String, JobFileError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let end = inner
                .find('}')
                .ok_or_else(|| JobFileError::UnclosedVariable {
                    origin: origin.into(),
                    value: value.into(),
                })?;
            out.push_str(&std::env::var(&inner[..end]).unwrap_or_default());
            rest = &inner[end + 1..];
            continue;
        }
        let word_len = after
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(after.len());
        let word = &after[..word_len];
        let replacement = match word {
            "ncpus" => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
            // SAFETY: sysconf has no memory-safety preconditions.
            "pagesize" => unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.to_string(),
            "mb_memory" => {
                // SAFETY: as above.
                let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
                let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
                ((pages.max(0) as u64 * page.max(0) as u64) >> 20).to_string()
            }
            _ => {
                return Err(JobFileError::Keyword {
                    origin: origin.into(),
                    word: word.into(),
                    value: value.into(),
                });
            }
        };
        out.push_str(&replacement);
        rest = &after[word_len..];
    }
    out.push_str(rest);
    if out.trim_start().starts_with('(') {
        return Err(JobFileError::Arithmetic {
            origin: origin.into(),
            value: value.into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "[global]\nioengine=libaio\ndirect=1\n[read4k-rand]\nstonewall\ngroup_reporting\nbs=4k\n\
                        [read64k-seq] stonewall\nbs=64k\n; comment\n# another\n";

    #[test]
    fn parses_the_seed_layout_both_ways() {
        let s = parse(SEED, Path::new("fio_sys.conf")).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s[0].is_global());
        assert_eq!(s[1].entries[0].key, "stonewall");
        assert_eq!(s[1].entries[0].value, None);
        assert_eq!(s[2].name, "read64k-seq");
        assert_eq!(s[2].entries[0].key, "stonewall");
        assert_eq!(s[2].entries[1].value.as_deref(), Some("64k"));
        assert_eq!(s[2].entries[1].origin, "fio_sys.conf:9");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("bs=4k\n", Path::new("j.fio")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "j.fio:1: 'bs=4k' comes before any [section]; put it under [global]"
        );
        let e = parse("[job\n", Path::new("j.fio")).unwrap_err();
        assert!(
            matches!(&e, JobFileError::Unclosed { origin, line } if origin == "j.fio:1" && line == "[job"),
            "{e:?}"
        );
        let e = parse("[a]\nsize=(8*$mb_memory)\n", Path::new("j.fio")).unwrap_err();
        assert!(
            matches!(&e, JobFileError::Arithmetic { origin, .. } if origin == "j.fio:2"),
            "{e:?}"
        );
        assert!(e.to_string().contains("arithmetic"), "{e}");
    }

    #[test]
    fn unreadable_files_keep_the_system_error() {
        let e = read(Path::new("/nonexistent/j.fio")).unwrap_err();
        let JobFileError::Read { path, source } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(path, Path::new("/nonexistent/j.fio"));
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        assert!(e.to_string().starts_with("/nonexistent/j.fio: "), "{e}");
    }

    #[test]
    fn expands_variables_and_keywords() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("HB_FIO_TEST_DIR", "/tmp/x") };
        assert_eq!(expand("${HB_FIO_TEST_DIR}/f", "t").unwrap(), "/tmp/x/f");
        assert_eq!(expand("${HB_FIO_UNSET_VAR}", "t").unwrap(), "");
        assert!(expand("$ncpus", "t").unwrap().parse::<u32>().unwrap() >= 1);
        assert!(expand("$nope", "t").is_err());
        assert!(expand("${open", "t").is_err());
    }

    #[test]
    fn includes_add_options_to_the_current_section() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.fio"), "bs=8k\ndirect=1\n").unwrap();
        std::fs::write(
            dir.path().join("main.fio"),
            "[job]\ninclude common.fio\nrw=read\n",
        )
        .unwrap();
        let s = read(&dir.path().join("main.fio")).unwrap();
        let keys: Vec<_> = s[0].entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["bs", "direct", "rw"]);
        std::fs::write(dir.path().join("loop.fio"), "[job]\ninclude loop.fio\n").unwrap();
        assert!(read(&dir.path().join("loop.fio")).is_err());
        std::fs::write(dir.path().join("self.inc"), "bs=4k\ninclude self.inc\n").unwrap();
        std::fs::write(dir.path().join("deep.fio"), "[job]\ninclude self.inc\n").unwrap();
        let e = read(&dir.path().join("deep.fio")).unwrap_err();
        assert!(matches!(e, JobFileError::TooDeep { max: 8, .. }), "{e:?}");
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut rng = crate::measure::rng::Xoroshiro128Plus::seeded(11);
        let alphabet = b"[]=;#$ {}()\nabcxyz0123456789_-.:/\t\\";
        for _ in 0..20_000 {
            let len = rng.below(80);
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())] as char)
                .collect();
            let _ = parse(&text, Path::new("fuzz"));
        }
    }
}
