//! Guards the crate's one-way layering (see the crate docs): every `crate::<module>` path named in a
//! layer's non-test code is one that layer may import. Test modules and `*tests.rs` files may reach up
//! (they run whole pipelines).
use std::path::{Path, PathBuf};

/// What each top-level module may name besides itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("ir", &["error"]),
    ("buffer", &["error", "ir"]),
    ("plan", &["error", "ir"]),
    ("opt", &["error", "ir", "plan"]),
    ("backend", &["error", "ir", "plan", "buffer"]),
    ("runtime", &["error", "ir", "plan", "buffer", "opt", "backend"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") && !p.to_string_lossy().ends_with("tests.rs") {
            out.push(p);
        }
    }
}

/// The file's text before its `#[cfg(test)] mod … {` (test modules come last), without `//` comments.
fn non_test_code(src: &str) -> String {
    let mut keep = String::new();
    let mut lines = src.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            if let Some(next) = lines.peek() {
                let n = next.trim_start();
                if n.starts_with("mod ") && n.trim_end().ends_with('{') {
                    break;
                }
            }
        }
        if !t.starts_with("//") {
            keep.push_str(line);
            keep.push('\n');
        }
    }
    keep
}

/// The top-level modules named by `crate::<name>` paths in `code`.
fn named_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[test]
fn layers_import_only_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rust");
    let mut bad = Vec::new();
    for &(layer, allowed) in ALLOWED {
        let mut files = Vec::new();
        let dir = root.join(layer);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(root.join(format!("{layer}.rs")));
        }
        assert!(!files.is_empty(), "no sources for {layer}");
        for f in files {
            let code = non_test_code(&std::fs::read_to_string(&f).unwrap());
            for m in named_modules(&code) {
                let known = ALLOWED.iter().any(|(l, _)| *l == m) || m == "py";
                if known && m != layer && !allowed.contains(&m.as_str()) {
                    bad.push(format!("{}: {layer} names crate::{m}", f.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "imports against the layering:\n{}", bad.join("\n"));
}
