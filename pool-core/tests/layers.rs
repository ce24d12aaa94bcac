//! The crate's layering, as written at the top of `src/group.rs`: every `crate::` path in a
//! module names a module on the same or an earlier line of that list, every module is on the
//! list, and the import cycles are exactly the ones the same document names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `src` directory of this crate.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `text` without comments: everything from `//` to the end of a line (doc links are not
/// imports).
fn code_only(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment after every `crate::` in `code`, including each top-level entry of
/// a `crate::{...}` group.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 0 => {
                        out.push(ident(&group[j..]).to_string());
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest).to_string());
        }
    }
    out
}

/// Module name → source text of every module file (a directory module's files together);
/// `lib.rs`, the crate root, is returned apart.
fn modules() -> (BTreeMap<String, String>, String) {
    let mut mods: BTreeMap<String, String> = BTreeMap::new();
    let mut lib = String::new();
    let mut stack = vec![(src(), None::<String>)];
    while let Some((dir, owner)) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read src") {
            let path = e.expect("dir entry").path();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("utf-8 file name")
                .to_string();
            if path.is_dir() {
                stack.push((path, Some(owner.clone().unwrap_or(stem))));
                continue;
            }
            if path.extension().and_then(|x| x.to_str()) != Some("rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read module");
            match (&owner, stem.as_str()) {
                (None, "lib") => lib = text,
                (None, _) => mods.entry(stem).or_default().push_str(&text),
                (Some(o), _) => mods.entry(o.clone()).or_default().push_str(&text),
            }
        }
    }
    (mods, lib)
}

/// Root re-exports (`pub use module::{A, B}` in lib.rs): item name → module.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let code = code_only(lib);
    for stmt in code.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = ident(rest).to_string();
        let items = rest[module.len()..].trim_start_matches("::");
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = ident(item.trim());
            if !name.is_empty() {
                map.insert(name.to_string(), module.clone());
            }
        }
    }
    map
}

/// Module → the modules its `crate::` paths name (itself excluded).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let (mods, lib) = modules();
    let roots = reexports(&lib);
    let mut graph = BTreeMap::new();
    for (name, text) in &mods {
        let mut deps = BTreeSet::new();
        for first in crate_paths(&code_only(text)) {
            let target = if mods.contains_key(&first) {
                first.clone()
            } else if let Some(m) = roots.get(&first) {
                m.clone()
            } else {
                panic!("{name}: `crate::{first}` names neither a module nor a root re-export");
            };
            if &target != name {
                deps.insert(target);
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

/// The documented layers (in order) and import cycles, from the top of `src/group.rs`.
fn documented() -> (Vec<Vec<String>>, BTreeSet<BTreeSet<String>>) {
    let doc = std::fs::read_to_string(src().join("group.rs")).expect("read group.rs");
    let backticked = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(|w| w.to_string())
            .collect()
    };
    let mut layers = Vec::new();
    let mut cycles = BTreeSet::new();
    let mut in_layers = false;
    for line in doc.lines().map_while(|l| l.strip_prefix("//!")) {
        let line = line.trim();
        if line == "# Layers" {
            in_layers = true;
            continue;
        }
        if in_layers && line.starts_with('#') {
            break;
        }
        if !in_layers {
            continue;
        }
        let numbered = line
            .split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if let Some((n, rest)) = numbered {
            assert_eq!(
                n,
                (layers.len() + 1).to_string(),
                "layers are numbered in order"
            );
            let names = rest.split(':').next().unwrap_or("");
            layers.push(backticked(names));
        } else if let Some(rest) = line.strip_prefix("Import cycles:") {
            if rest.trim() != "none." {
                for cycle in rest.split(';') {
                    cycles.insert(backticked(cycle).into_iter().collect());
                }
            }
        }
    }
    assert!(!layers.is_empty(), "group.rs has a `# Layers` list");
    (layers, cycles)
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<BTreeSet<String>> {
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: BTreeSet<BTreeSet<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    self.out.insert(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: BTreeSet::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn import_cycles_are_exactly_the_documented_ones() {
    let graph = imports();
    let (_, documented) = documented();
    assert_eq!(
        cycles(&graph),
        documented,
        "import cycles among pool-core's modules (left) differ from those named in group.rs \
         (right); the imports: {graph:#?}"
    );
}

#[test]
fn every_module_imports_only_from_its_layer_or_below() {
    let graph = imports();
    let (layers, _) = documented();
    let mut layer_of = BTreeMap::new();
    for (i, names) in layers.iter().enumerate() {
        for n in names {
            assert!(
                layer_of.insert(n.clone(), i + 1).is_none(),
                "`{n}` is listed twice"
            );
        }
    }
    let listed: BTreeSet<_> = layer_of.keys().cloned().collect();
    let present: BTreeSet<_> = graph.keys().cloned().collect();
    assert_eq!(
        present, listed,
        "the modules in src/ (left) and those in group.rs's layer list (right)"
    );
    let mut upward = Vec::new();
    for (m, deps) in &graph {
        for d in deps {
            if layer_of[d] > layer_of[m] {
                upward.push(format!(
                    "{m} (line {}) imports {d} (line {})",
                    layer_of[m], layer_of[d]
                ));
            }
        }
    }
    assert!(upward.is_empty(), "upward imports: {upward:#?}");
}

#[test]
fn the_checker_sees_imports_and_cycles() {
    // The reader itself: grouped paths, comments ignored, and a two-module cycle found.
    let code = code_only(
        "use crate::{a::X, b};\n// use crate::c;\nfn f() { crate::d::g(); }\n/// [x](crate::e)",
    );
    assert_eq!(crate_paths(&code), ["a", "b", "d"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert(
        "b".to_string(),
        BTreeSet::from(["a".to_string(), "c".to_string()]),
    );
    g.insert("c".to_string(), BTreeSet::new());
    let expected = BTreeSet::from([BTreeSet::from(["a".to_string(), "b".to_string()])]);
    assert_eq!(cycles(&g), expected);
}
