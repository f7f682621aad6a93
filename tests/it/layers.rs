//! The library's layers point one way, and no two files import each other
//! (directly or round a circle): format (pure parsers) <- model (plain data)
//! <- capture (paths to model values) and analysis (pure functions over the
//! model) <- engine (every pipeline) <- render (facts to text, JSON and
//! the report's HTML) <- the binary. Read from the source's own `crate::`
//! and `super::` paths, leaving out comments and unit tests; a new arrow
//! that runs back up, or a new circle, fails here with the files and lines
//! that make it. Render reads only format and model, so what it prints is
//! what the engine computed or opened. The binary (`src/cli`) uses the
//! library through engine, render and model only. Each item has one home:
//! no module re-exports (`pub use`) another layer's item.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which layers a layer may use (itself included).
fn allowed(layer: &str) -> &'static [&'static str] {
    match layer {
        "format" => &["format"],
        "model" => &["format", "model"],
        "capture" => &["format", "model", "capture"],
        "analysis" => &["format", "model", "analysis"],
        "engine" => &["format", "model", "capture", "analysis", "engine"],
        "render" => &["format", "model", "render"],
        // the binary's modules name each other as `crate::cli::` and
        // `super::`; the library they reach as `klf::` (see
        // `the_binary_uses_engine_render_and_model`)
        "cli" => &["cli"],
        _ => &[],
    }
}

/// Module path -> the modules it names -> where it first names each.
type Edges = BTreeMap<Vec<String>, BTreeMap<Vec<String>, (PathBuf, usize)>>;

struct Module {
    path: Vec<String>,
    file: PathBuf,
    code: String,
}

fn modules() -> Vec<Module> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for p in crate::common::rust_sources("src") {
        let rel = p.strip_prefix(&src).unwrap();
        let mut path: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        // The binary's root and the library's root: the binary's
        // modules (`cli`) are read for circles among themselves.
        if matches!(
            path.first().map(String::as_str),
            Some("main" | "man" | "lib")
        ) {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let code = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        out.push(Module {
            path,
            file: p,
            code,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The paths a module's code names: `crate::a::b::c` and `super::x::y`
/// (made absolute), with the line they are on.
fn references(m: &Module) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    for (n, line) in m.code.lines().enumerate() {
        // `use child::...` / `pub use child::...` of a module's own child
        // (a relative path): an arrow from the module to the child.
        let t = line.trim_start();
        if let Some(rest) = t
            .strip_prefix("pub use ")
            .or_else(|| t.strip_prefix("use "))
        {
            let first: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !first.is_empty() && !["crate", "super", "self", "std"].contains(&first.as_str()) {
                let mut p = m.path.clone();
                p.push(first);
                out.push((p, n + 1));
            }
        }
        for (start, prefix) in [("crate::", None), ("super::", Some(()))] {
            let mut rest = line;
            while let Some(i) = rest.find(start) {
                // A whole word: not `klf::crate::`, not `xsuper::`.
                let before = rest[..i].chars().next_back();
                let after = &rest[i + start.len()..];
                rest = after;
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let mut segs: Vec<String> = Vec::new();
                let mut s = after;
                loop {
                    let end = s
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(s.len());
                    if end == 0 {
                        break;
                    }
                    segs.push(s[..end].to_string());
                    if !s[end..].starts_with("::") {
                        break;
                    }
                    s = &s[end + 2..];
                }
                let mut abs = match prefix {
                    None => Vec::new(),
                    Some(()) => {
                        // `super` is the parent module.
                        let mut p = m.path.clone();
                        p.pop();
                        p
                    }
                };
                let mut segs = segs.into_iter().peekable();
                // super::super::...
                while segs.peek().is_some_and(|s| s == "super") {
                    segs.next();
                    abs.pop();
                }
                abs.extend(segs);
                out.push((abs, n + 1));
            }
        }
    }
    out
}

#[test]
fn layers_point_one_way_and_files_make_no_circle() {
    let mods = modules();
    assert!(mods.len() > 40, "read {} modules", mods.len());
    let known: BTreeSet<Vec<String>> = mods.iter().map(|m| m.path.clone()).collect();
    let resolve = |p: &[String]| -> Option<Vec<String>> {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|q| known.contains(q))
    };
    let mut wrong = Vec::new();
    let mut edges: Edges = BTreeMap::new();
    for m in &mods {
        let layer = m.path[0].as_str();
        for (target, line) in references(m) {
            let Some(t) = resolve(&target) else { continue };
            if t == m.path {
                continue;
            }
            let to = t[0].as_str();
            if !allowed(layer).contains(&to) {
                wrong.push(format!(
                    "{}:{line}: {layer} uses {to} ({})",
                    m.file.display(),
                    target.join("::")
                ));
            }
            edges
                .entry(m.path.clone())
                .or_default()
                .entry(t)
                .or_insert((m.file.clone(), line));
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows that run back up:\n{}",
        wrong.join("\n")
    );
    // Circles between files: a depth-first search for a back edge.
    fn visit(
        n: &Vec<String>,
        edges: &Edges,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
        found: &mut Vec<String>,
    ) {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for (t, (file, line)) in edges.get(n).into_iter().flatten() {
            match state.get(t).copied().unwrap_or(0) {
                0 => visit(t, edges, state, stack, found),
                1 => {
                    let at = stack.iter().position(|s| s == t).unwrap_or(0);
                    let circle: Vec<String> = stack[at..].iter().map(|s| s.join("::")).collect();
                    found.push(format!(
                        "{} -> {} (closing at {}:{line})",
                        circle.join(" -> "),
                        t.join("::"),
                        file.display()
                    ));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
    }
    let mut state = BTreeMap::new();
    let mut found = Vec::new();
    for m in &mods {
        if state.get(&m.path).copied().unwrap_or(0) == 0 {
            visit(&m.path, &edges, &mut state, &mut Vec::new(), &mut found);
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_binary_uses_engine_render_and_model() {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let files = crate::common::rust_sources("src/cli");
    assert!(files.len() > 10, "read {} files", files.len());
    let mut wrong = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&cli).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            // doc comments name the library's parts freely
            if line.trim_start().starts_with("//") {
                continue;
            }
            let mut rest = line;
            while let Some(i) = rest.find("klf::") {
                let before = rest[..i].chars().next_back();
                let after = &rest[i + "klf::".len()..];
                rest = after;
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let layer: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // `klf::{a, b}` would hide the layers it names
                if layer.is_empty() {
                    wrong.push(format!(
                        "src/cli/{rel}:{}: klf::{{...}}: name each layer",
                        n + 1
                    ));
                    continue;
                }
                if ["engine", "render", "model"].contains(&layer.as_str()) {
                    continue;
                }
                wrong.push(format!("src/cli/{rel}:{}: klf::{layer}", n + 1));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the binary uses the library through engine, render and model:\n{}",
        wrong.join("\n")
    );
}

/// The layer a `use` path names (`crate::a::...`, or `super::...` made
/// absolute from the module's own path), if it names one.
fn used_layer(m: &Module, path: &str) -> Option<String> {
    let mut segs = path.split("::").map(str::trim);
    match segs.next()? {
        "crate" => segs.next().map(str::to_string),
        "super" => {
            let mut up = 1;
            let mut next = segs.next();
            while next == Some("super") {
                up += 1;
                next = segs.next();
            }
            // `super` of a module `a::b::c` is `a::b`; the layer is the
            // first segment left, or the next one named
            let kept = m.path.len().saturating_sub(up);
            match kept {
                0 => next.map(str::to_string),
                _ => Some(m.path[0].clone()),
            }
        }
        // a relative path names the module's own child: its own layer
        _ => Some(m.path[0].clone()),
    }
}

#[test]
fn no_module_re_exports_another_layers_item() {
    let mods = modules();
    assert!(mods.len() > 40, "read {} modules", mods.len());
    let mut wrong = Vec::new();
    for m in &mods {
        let layer = m.path[0].as_str();
        for (n, line) in m.code.lines().enumerate() {
            let t = line.trim_start();
            let Some(rest) = t
                .strip_prefix("pub use ")
                .or_else(|| t.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            let Some(to) = used_layer(m, rest) else {
                continue;
            };
            if to != layer {
                wrong.push(format!(
                    "{}:{}: {layer} re-exports {to}'s {}",
                    m.file.display(),
                    n + 1,
                    rest.trim_end_matches(['{', ';', ' '])
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "items with a second home (import them from their own layer instead):\n{}",
        wrong.join("\n")
    );
}

/// No analysis type is serialised: what is written out is a model value
/// or a wire type of render, built from model values.
#[test]
fn analysis_types_are_not_serialised() {
    let files = crate::common::rust_sources("src/analysis");
    assert!(files.len() > 10, "read {} files", files.len());
    let mut found = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("serde") || line.contains("Serialize") {
                found.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "serialisation in analysis:\n{}",
        found.join("\n")
    );
}

/// Every serialised field named as a time (`timestamp`, `time`, a name
/// ending in `_timestamp`) is declared one, so that the JSON writer gives
/// it its `NAME_utc` twin by its type: a field that only looks like a
/// time by its name gets none.
#[test]
fn serialised_time_fields_are_declared_times() {
    let mut checked = 0;
    let mut undeclared = Vec::new();
    for dir in ["src/model", "src/render"] {
        for p in crate::common::rust_sources(dir) {
            let text = std::fs::read_to_string(&p).unwrap();
            // unit tests make their own documents
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let lines: Vec<&str> = code.lines().collect();
            let mut serialised = false;
            let mut in_struct = false;
            for (n, line) in lines.iter().enumerate() {
                let t = line.trim();
                if t.starts_with("#[derive(") {
                    serialised = t.contains("Serialize");
                } else if t.contains("struct ") && t.ends_with('{') {
                    in_struct = serialised;
                } else if t == "}" {
                    in_struct = false;
                    serialised = false;
                } else if in_struct {
                    let field = t
                        .trim_start_matches("pub(crate) ")
                        .trim_start_matches("pub ")
                        .split(':')
                        .next()
                        .unwrap_or("");
                    let time = matches!(field, "timestamp" | "time")
                        || (field.ends_with("_timestamp") && !field.contains(' '));
                    if time && t.contains(':') {
                        checked += 1;
                        let declared = lines[..n]
                            .iter()
                            .rev()
                            .take_while(|l| {
                                let l = l.trim();
                                l.starts_with("///") || l.starts_with("#[")
                            })
                            .any(|l| l.contains("time::millis"));
                        if !declared {
                            undeclared.push(format!("{}:{}: {t}", p.display(), n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 10, "checked {checked} fields");
    assert!(
        undeclared.is_empty(),
        "serialised time fields not declared with crate::model::time::millis:\n{}",
        undeclared.join("\n")
    );
}
