//! The server crate's import graph: reads the `crate::` paths of every top-level module under
//! `src/` (code only: comments and `#[cfg(test)]` sections are skipped) and checks that its
//! import cycles are exactly the ones `src/lib.rs` lists under "Cycles that remain" — so a
//! new cycle fails, and so does a listed cycle that no longer exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Names under `crate::` that are the engine crate re-exported, not server modules.
const ENGINE_REEXPORTS: &[&str] = &["engine", "trx", "value"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules each top-level module names through `crate::`.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a component");
        let module = Path::new(first.as_os_str())
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 name")
            .to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let deps = graph.entry(module.clone()).or_default();
        let text = std::fs::read_to_string(&f).expect("read file");
        for line in text.lines() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("crate::{"),
                "{}: grouped `crate::{{..}}` imports are not read by this check",
                rel.display()
            );
            for (i, _) in code.match_indices("crate::") {
                let before = code[..i].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue; // `tpbed_crate::` or similar
                }
                let rest = &code[i + "crate::".len()..];
                let dep: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !dep.is_empty() && dep != module && !ENGINE_REEXPORTS.contains(&dep.as_str()) {
                    deps.insert(dep);
                }
            }
        }
    }
    graph
}

/// Strongly connected components with more than one module (Tarjan), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        next: usize,
        out: BTreeSet<Vec<String>>,
    }
    impl<'g> T<'g> {
        fn visit(&mut self, v: &'g str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            let g = self.g;
            for w in g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.insert(scc);
                }
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: BTreeSet::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// The cycles `lib.rs` documents: lines `//! - cycle: a, b, c — why` under its
/// "Cycles that remain" heading.
fn documented_cycles(lib: &str) -> BTreeSet<Vec<String>> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! - cycle: "))
        .map(|l| {
            let names = l.split(" — ").next().unwrap_or("");
            let mut v: Vec<String> = names.split(',').map(|s| s.trim().to_string()).collect();
            v.sort();
            v
        })
        .collect()
}

#[test]
fn import_cycles_are_exactly_the_documented_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = import_graph(&root.join("src"));
    assert!(graph.len() > 10, "read the modules: {graph:?}");
    let found = cycles(&graph);
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
    let documented = documented_cycles(&lib);
    let mut report = String::new();
    for (m, deps) in &graph {
        report.push_str(&format!("  {m} -> {deps:?}\n"));
    }
    assert_eq!(
        found, documented,
        "import cycles among the server's top-level modules differ from lib.rs's list\n{report}"
    );
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec![]),
        ("e", vec!["e"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let want: BTreeSet<Vec<String>> = [vec!["a".to_string(), "b".into(), "c".into()]].into();
    assert_eq!(cycles(&g), want);
}
