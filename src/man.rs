//! The man pages in `man/`, generated from the clap definition: `klf.1` and
//! one `klf-<subcommand>.1` per subcommand. Each page has the options clap
//! knows, then the sections of the command's `after_long_help` (exit status,
//! output formats, inputs, examples), which `--help` prints too.
//!
//! `klf man` prints or installs them from here. The test below fails when a
//! checked-in page differs from what the current definition generates;
//! `KLF_UPDATE_MAN=1 cargo test --bin klf man` rewrites them.

use clap::CommandFactory;
use clap_mangen::Man;
use roff::{roman, Roff};

/// `(file name, roff text)` of every page, in name order.
pub fn pages() -> Vec<(String, Vec<u8>)> {
    let mut top = crate::Cli::command();
    top.build();
    let mut pages = vec![("klf.1".to_string(), render(&top, true))];
    for sub in top.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        pages.push((format!("klf-{}.1", sub.get_name()), render(sub, false)));
    }
    pages.sort();
    pages
}

fn render(cmd: &clap::Command, top: bool) -> Vec<u8> {
    let man = Man::new(cmd.clone());
    let mut out = Vec::new();
    type Part = fn(&Man, &mut dyn std::io::Write) -> std::io::Result<()>;
    let parts: [Part; 4] = [
        Man::render_title,
        Man::render_name_section,
        Man::render_synopsis_section,
        Man::render_description_section,
    ];
    for part in parts {
        part(&man, &mut out).expect("render to memory");
    }
    man.render_options_section(&mut out)
        .expect("render to memory");
    if top {
        man.render_subcommands_section(&mut out)
            .expect("render to memory");
    }
    let mut roff = Roff::default();
    if let Some(after) = cmd.get_after_long_help() {
        sections(&mut roff, &after.to_string());
    }
    if !top {
        roff.control("SH", ["SEE ALSO"]);
        roff.text([roman("klf(1)")]);
    }
    roff.to_writer(&mut out).expect("render to memory");
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)
            .expect("render to memory");
    }
    out
}

/// `Heading:` lines at the margin become sections; the indented lines under
/// them are kept as laid out.
fn sections(roff: &mut Roff, text: &str) {
    let mut open = false;
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            if open {
                roff.control("fi", []);
            }
            roff.control("SH", [line.trim_end_matches(':').to_uppercase().as_str()]);
            roff.control("nf", []);
            open = true;
        } else if line.trim().is_empty() {
            roff.control("sp", []);
        } else {
            roff.text([roman(line)]);
        }
    }
    if open {
        roff.control("fi", []);
    }
}

#[cfg(test)]
fn man_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("man")
}

#[cfg(test)]
#[test]
fn man_pages_are_up_to_date() {
    let dir = man_dir();
    let pages = pages();
    if std::env::var_os("KLF_UPDATE_MAN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".1") && !pages.iter().any(|(n, _)| *n == name) {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        for (name, text) in &pages {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (name, text) in &pages {
        match std::fs::read(dir.join(name)) {
            Ok(on_disk) if on_disk == *text => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(e) => stale.push(format!("{name}: {e}")),
        }
    }
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".1") && !pages.iter().any(|(n, _)| *n == name) {
            stale.push(format!("{name} is not generated any more"));
        }
    }
    assert!(
        stale.is_empty(),
        "man pages out of date ({}); run KLF_UPDATE_MAN=1 cargo test --bin klf man",
        stale.join(", ")
    );
    // Every subcommand has a page, and each page has the sections the
    // README promises.
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    for sub in [
        "dump",
        "diff",
        "timeline",
        "check",
        "impact",
        "salvage",
        "elect",
        "report",
        "digest",
        "completions",
        "man",
    ] {
        assert!(
            names.contains(&format!("klf-{sub}.1").as_str()),
            "{names:?}"
        );
    }
    // The one line that says what klf is (`klf --help`, klf.1's NAME,
    // Cargo.toml's description) names every command.
    let top = crate::Cli::command();
    let about = top.get_about().map(|a| a.to_string()).unwrap_or_default();
    let words: Vec<&str> = about.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    for sub in top.get_subcommands() {
        assert!(
            words.contains(&sub.get_name()),
            "the about line does not name {}: {about}",
            sub.get_name()
        );
    }
    assert_eq!(about, env!("CARGO_PKG_DESCRIPTION"));
    for (name, text) in &pages {
        let text = String::from_utf8_lossy(text);
        assert!(
            text.contains(".SH \"EXIT STATUS\""),
            "{name}: no EXIT STATUS"
        );
        assert!(text.contains(".SH OPTIONS"), "{name}: no OPTIONS");
    }
}
