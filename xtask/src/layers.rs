//! `cargo xtask layers`: the import rules of the source tree. Reads every `.rs` file under
//! `src/` and `xtask/src/` (each crate on its own), builds a file-level graph from the Rust
//! paths written in them — `use` trees and paths inline in code, with comments and string
//! literals skipped — and fails on an import cycle between files, on an import cycle between
//! folders, on an import that runs upward across the main crate's layers (`MAIN`'s table; the
//! engine's rooms among engine files), on `crossterm` named under `app`, and on an import
//! `MAIN` forbids whatever the ranks (`views` of `backend`, `views` of `app` but `app::state`,
//! `output` of `cli`). It also fails on a file with more than 1,500 lines before its tests
//! (before the first `#[cfg(test)]` at the start of a line; all of them when there is none)
//! and, under `src/`, on a folder with more than 15 `.rs` files directly in it (its `mod.rs`
//! among them; `xtask/src/` keeps its subcommands side by side). Paths resolve by walking the
//! module tree to the deepest module that has a file; re-exports are not followed (a `pub use`
//! is an import of the file that holds it). It only reads source files: it must not write,
//! build or run anything.
//!
//! Folder cycles are looked for among the children of each folder, one folder at a time: the
//! children of `backend` are its files (`backend/messages.rs`) and its subfolders, each
//! subfolder taken whole (`backend/kube/` is `backend/kube.rs` or `backend/kube/mod.rs` and
//! every file under `backend/kube/`); those of `src/` are its files (`glob.rs`) and folders
//! (`app/`), `lib.rs` and `main.rs` being its own. An import from a file of one child to a file
//! of another is an edge between the two children, so `backend/kube/live/task.rs` importing
//! `backend/cluster_profiles.rs` is the edge `backend/kube/ -> backend/cluster_profiles.rs`; an
//! import between a folder's own file (`mod.rs`) and anything under it is between a parent and
//! its child, in either direction, and no edge at all. A set of children that reach each other
//! (a strongly connected component) is a cycle when one of them is a subfolder; one of files
//! only is already a cycle between files. Every edge of the cycle is shown with the first
//! import that makes it (file:line, the first file in path order) and how many file-to-file
//! imports do.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::paths;

/// A module path prefix (`backend`, `engine::place`) and its rank: a file may import only
/// files of its own rank or below. The longest matching prefix wins.
#[derive(Debug, Clone, Copy)]
struct Layer {
    prefix: &'static str,
    rank: u8,
}

const fn layer(prefix: &'static str, rank: u8) -> Layer {
    Layer { prefix, rank }
}

/// Ranks among the files of one module (`within`), checked the same way between two of its
/// files that both match; `within` itself (its `mod.rs`, which only re-exports) and files no
/// room matches take no part.
#[derive(Debug, Clone, Copy)]
struct Rooms {
    within: &'static str,
    layers: &'static [Layer],
}

/// The rules of one crate's source directory.
#[derive(Debug, Clone, Copy)]
struct CrateRules {
    /// The source directory, relative to the repository root (`src`).
    dir: &'static str,
    /// What the package's other crate roots call its library (`flotilla::…` in `main.rs`).
    lib_name: Option<&'static str>,
    /// Empty: only the cycle rule applies.
    layers: &'static [Layer],
    /// Modules outside the layer rule (`lib`, which only declares modules).
    exempt: &'static [&'static str],
    rooms: &'static [Rooms],
    /// `(module prefix, crate)`: files under the prefix must not name the crate.
    forbidden_crates: &'static [(&'static str, &'static str)],
    forbidden_imports: &'static [Forbidden],
    /// At most this many `.rs` files directly in one folder (its `mod.rs` among them).
    max_files_in_folder: Option<usize>,
    /// At most this many lines in a file before its tests (the first `#[cfg(test)]` at the
    /// start of a line; all its lines when it has none).
    max_lines_before_tests: Option<usize>,
}

/// Files under `from` must not import files under `to`, except those under `except`, whatever
/// their ranks.
#[derive(Debug, Clone, Copy)]
struct Forbidden {
    from: &'static str,
    to: &'static str,
    except: &'static [&'static str],
    /// Why, and what to do instead.
    why: &'static str,
}

/// The main crate, top to bottom. `main` is `src/main.rs`, `lib` is `src/lib.rs`.
const MAIN: CrateRules = CrateRules {
    dir: "src",
    lib_name: Some("flotilla"),
    layers: &[
        layer("main", 9),
        layer("launch", 8),
        layer("console", 8),
        layer("commands", 8),
        layer("source", 8),
        layer("cli", 8),
        layer("logging", 8),
        // Below `cli` and `commands`: how a result prints, knowing nothing of the command line.
        layer("output", 7),
        layer("views", 7),
        layer("app", 6),
        layer("backend", 5),
        layer("fleet", 5),
        // Below `app`, `backend` and `views`, which all import it: the messages between them.
        layer("messages", 4),
        layer("fleet::demo", 4),
        layer("engine", 3),
        layer("config", 2),
        layer("model", 1),
        layer("glob", 1),
        layer("jsonl", 1),
        layer("safe_text", 1),
        layer("paths", 1),
    ],
    exempt: &["lib"],
    rooms: &[Rooms {
        within: "engine",
        layers: &[
            layer("engine::document", 1),
            layer("engine::health", 1),
            layer("engine::interpreter", 2),
            layer("engine::place", 2),
            layer("engine::overrides", 2),
            layer("engine::dialect", 3),
            layer("engine::compare", 3),
            layer("engine::fleet", 4),
            layer("engine::render", 5),
            layer("engine::edit", 6),
        ],
    }],
    forbidden_crates: &[("app", "crossterm")],
    forbidden_imports: &[
        Forbidden {
            from: "views",
            to: "backend",
            except: &[],
            why: "they draw the state, so what they show of the backend must reach them through \
                  app::state",
        },
        Forbidden {
            from: "views",
            to: "app",
            except: &["app::state"],
            why: "they draw `&State`, so move what they need of app (a pure function of the \
                  state) into app::state",
        },
        Forbidden {
            from: "output",
            to: "cli",
            except: &[],
            why: "it prints a result knowing nothing of the command line, so let cli pass what \
                  it needs",
        },
    ],
    max_files_in_folder: Some(15),
    max_lines_before_tests: Some(1500),
};

/// xtask: no layers, only the cycle rules and the length of a file; its subcommands lie side
/// by side in one folder.
const XTASK: CrateRules = CrateRules {
    dir: "xtask/src",
    lib_name: None,
    layers: &[],
    exempt: &[],
    rooms: &[],
    forbidden_crates: &[],
    forbidden_imports: &[],
    max_files_in_folder: None,
    max_lines_before_tests: Some(1500),
};

const CRATES: [CrateRules; 2] = [MAIN, XTASK];

/// `cargo xtask layers`: prints the report of every crate; true when all pass.
pub fn run() -> Result<bool> {
    let root = paths::repo_root();
    let mut ok = true;
    for rules in &CRATES {
        let files = read_tree(&root.join(rules.dir))?;
        let report = check(rules, &files)?;
        say!("{}", report.render(rules.dir));
        ok &= report.passed();
    }
    Ok(ok)
}

/// The step of `cargo xtask test`: `run`, failing when any rule is broken.
pub fn check_all() -> Result<()> {
    if !run()? {
        bail!(
            "the import rules are broken (see the report above; the rules are in \
             xtask/src/layers.rs)"
        );
    }
    Ok(())
}

/// Every `.rs` file under `dir`: its path relative to `dir` (with `/`) and its text, sorted.
fn read_tree(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(dir)
                    .with_context(|| format!("{} is outside {}", path.display(), dir.display()))?;
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().to_string())
                    .collect();
                let text = fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                out.push((rel.join("/"), text));
            }
        }
    }
    out.sort();
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Lexing: identifiers, `::` and punctuation, with comments, strings, chars and lifetimes gone.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `r#name`: a name, never a keyword.
    Raw(String),
    /// `::`
    Sep,
    Punct(char),
    /// A string, char or number literal, or a lifetime: never part of a path.
    Lit,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits Rust source into tokens; comments (doc comments too) and literals leave nothing
/// that could read as a path.
fn lex(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let at = |k: usize| c.get(k).copied();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    while let Some(ch) = at(i) {
        let start_line = line;
        match ch {
            '\n' => {
                line += 1;
                i += 1;
            }
            _ if ch.is_whitespace() => i += 1,
            '/' if at(i + 1) == Some('/') => {
                while at(i).is_some_and(|x| x != '\n') {
                    i += 1;
                }
            }
            '/' if at(i + 1) == Some('*') => {
                let mut depth = 0usize;
                while let Some(x) = at(i) {
                    if x == '/' && at(i + 1) == Some('*') {
                        depth += 1;
                        i += 2;
                    } else if x == '*' && at(i + 1) == Some('/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if x == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => {
                i = skip_string(&c, i + 1, &mut line);
                out.push(Token {
                    tok: Tok::Lit,
                    line: start_line,
                });
            }
            '\'' => {
                i = skip_quote(&c, i);
                out.push(Token {
                    tok: Tok::Lit,
                    line: start_line,
                });
            }
            ':' if at(i + 1) == Some(':') => {
                out.push(Token {
                    tok: Tok::Sep,
                    line,
                });
                i += 2;
            }
            _ if is_ident_start(ch) => {
                let start = i;
                while at(i).is_some_and(is_ident_char) {
                    i += 1;
                }
                let word: String = c[start..i].iter().collect();
                let tok = match (word.as_str(), at(i)) {
                    ("b" | "c", Some('"')) => {
                        i = skip_string(&c, i + 1, &mut line);
                        Tok::Lit
                    }
                    ("b", Some('\'')) => {
                        i = skip_quote(&c, i);
                        Tok::Lit
                    }
                    ("r", Some('#')) if at(i + 1).is_some_and(is_ident_start) => {
                        let start = i + 1;
                        i = start;
                        while at(i).is_some_and(is_ident_char) {
                            i += 1;
                        }
                        Tok::Raw(c[start..i].iter().collect())
                    }
                    ("r" | "br" | "cr", Some('"' | '#')) => {
                        i = skip_raw_string(&c, i, &mut line);
                        Tok::Lit
                    }
                    _ => Tok::Ident(word),
                };
                out.push(Token {
                    tok,
                    line: start_line,
                });
            }
            _ if ch.is_ascii_digit() => {
                while at(i).is_some_and(is_ident_char) {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Lit,
                    line,
                });
            }
            _ => {
                out.push(Token {
                    tok: Tok::Punct(ch),
                    line,
                });
                i += 1;
            }
        }
    }
    out
}

/// From just after an opening `"`: the index after the closing one.
fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while let Some(&x) = c.get(i) {
        match x {
            '\\' => {
                if c.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' => return i + 1,
            _ => {
                if x == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    c.len()
}

/// From the `#`s or `"` after `r`/`br`/`cr`: the index after the closing `"#…`.
fn skip_raw_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut hashes = 0;
    while c.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if c.get(i) != Some(&'"') {
        return i;
    }
    i += 1;
    while let Some(&x) = c.get(i) {
        if x == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        if x == '\n' {
            *line += 1;
        }
        i += 1;
    }
    c.len()
}

/// From a `'`: the index after the char literal (`'x'`, `'\n'`, `'\u{1F600}'`) or the
/// lifetime (`'a`, `'static`) it starts.
fn skip_quote(c: &[char], i: usize) -> usize {
    match (c.get(i + 1), c.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 3;
            while c.get(j).is_some_and(|&x| x != '\'' && x != '\n') {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => {
            let mut j = i + 1;
            while c.get(j).copied().is_some_and(is_ident_char) {
                j += 1;
            }
            j
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scanning: module declarations, `use` leaves and inline paths, each in the module it is
// written in (inline `mod x { … }` blocks included).

/// One path written in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ref {
    /// The module it is written in: the file's, or an inline module's inside it.
    scope: Vec<String>,
    /// Its segments (a glob's without the `*`, a `use a::{self}` leaf's without `self`).
    segs: Vec<String>,
    line: usize,
    kind: RefKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RefKind {
    /// A `use` leaf: the name it brings into scope (none for `as _` and globs).
    Use {
        alias: Option<String>,
        glob: bool,
        /// Written with a leading `::` (only an extern crate can follow).
        extern_only: bool,
    },
    /// A path in code (`crate::a::f(…)`, `super::T`, `child::g()`).
    Inline,
}

#[derive(Debug, Default)]
struct Scan {
    /// `(scope, name)` of every `mod name;` and `mod name { … }`.
    mods: Vec<(Vec<String>, String)>,
    refs: Vec<Ref>,
}

fn tok(tokens: &[Token], i: usize) -> Option<&Tok> {
    tokens.get(i).map(|t| &t.tok)
}

fn name_at(tokens: &[Token], i: usize) -> Option<&str> {
    match tok(tokens, i) {
        Some(Tok::Ident(n) | Tok::Raw(n)) => Some(n),
        _ => None,
    }
}

fn keyword_at(tokens: &[Token], i: usize, word: &str) -> bool {
    matches!(tok(tokens, i), Some(Tok::Ident(n)) if n == word)
}

/// Finds the module declarations and every path of one file whose module is `module`.
fn scan(tokens: &[Token], module: &[String]) -> Scan {
    let mut out = Scan::default();
    // Open inline modules: (module path, the brace depth their `}` closes).
    let mut scopes: Vec<(Vec<String>, usize)> = vec![(module.to_vec(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let scope = scopes.last().map(|(s, _)| s.clone()).unwrap_or_default();
        if keyword_at(tokens, i, "mod")
            && let Some(name) = name_at(tokens, i + 1)
        {
            match tok(tokens, i + 2) {
                Some(Tok::Punct(';')) => {
                    out.mods.push((scope, name.to_string()));
                    i += 3;
                    continue;
                }
                Some(Tok::Punct('{')) => {
                    out.mods.push((scope.clone(), name.to_string()));
                    depth += 1;
                    let mut inner = scope;
                    inner.push(name.to_string());
                    scopes.push((inner, depth));
                    i += 3;
                    continue;
                }
                _ => {}
            }
        }
        if keyword_at(tokens, i, "use") && tok(tokens, i + 1) != Some(&Tok::Punct('<')) {
            let mut leaves = Vec::new();
            let mut j = i + 1;
            if use_tree(tokens, &mut j, &[], false, &mut leaves)
                && tok(tokens, j) == Some(&Tok::Punct(';'))
            {
                for (segs, line, kind) in leaves {
                    out.refs.push(Ref {
                        scope: scope.clone(),
                        segs,
                        line,
                        kind,
                    });
                }
                i = j + 1;
                continue;
            }
        }
        match tok(tokens, i) {
            Some(Tok::Punct('{')) => depth += 1,
            Some(Tok::Punct('}')) => {
                if scopes.len() > 1 && scopes.last().is_some_and(|(_, d)| *d == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Some(Tok::Ident(_) | Tok::Raw(_)) if starts_path(tokens, i) => {
                let line = tokens[i].line;
                let mut segs = vec![name_at(tokens, i).unwrap_or_default().to_string()];
                let mut j = i + 1;
                while tok(tokens, j) == Some(&Tok::Sep)
                    && let Some(next) = name_at(tokens, j + 1)
                {
                    segs.push(next.to_string());
                    j += 2;
                }
                out.refs.push(Ref {
                    scope,
                    segs,
                    line,
                    kind: RefKind::Inline,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the name at `i` starts a path of at least two segments: followed by `::name`,
/// not itself after `::`, `.` (a method's turbofish) or `$` (`$crate`), and not the module of
/// a `pub(in …)` visibility.
fn starts_path(tokens: &[Token], i: usize) -> bool {
    if tok(tokens, i + 1) != Some(&Tok::Sep) || name_at(tokens, i + 2).is_none() {
        return false;
    }
    let Some(prev) = i.checked_sub(1) else {
        return true;
    };
    match tok(tokens, prev) {
        Some(Tok::Sep | Tok::Punct('.' | '$')) => false,
        Some(Tok::Ident(w)) if w == "in" => {
            !(prev > 0 && tok(tokens, prev - 1) == Some(&Tok::Punct('(')))
        }
        _ => true,
    }
}

/// Parses one use tree at `*i` under `prefix`, appending its leaves; false when it is not
/// one (a macro's `use $crate::…`, say).
fn use_tree(
    tokens: &[Token],
    i: &mut usize,
    prefix: &[String],
    extern_only: bool,
    out: &mut Vec<(Vec<String>, usize, RefKind)>,
) -> bool {
    let mut segs = prefix.to_vec();
    let mut extern_only = extern_only;
    if segs.is_empty() && tok(tokens, *i) == Some(&Tok::Sep) {
        extern_only = true;
        *i += 1;
    }
    loop {
        let line = tokens.get(*i).map_or(0, |t| t.line);
        match tok(tokens, *i) {
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    if tok(tokens, *i) == Some(&Tok::Punct('}')) {
                        *i += 1;
                        return true;
                    }
                    if !use_tree(tokens, i, &segs, extern_only, out) {
                        return false;
                    }
                    match tok(tokens, *i) {
                        Some(Tok::Punct(',')) => *i += 1,
                        Some(Tok::Punct('}')) => {}
                        _ => return false,
                    }
                }
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                let kind = RefKind::Use {
                    alias: None,
                    glob: true,
                    extern_only,
                };
                out.push((segs, line, kind));
                return true;
            }
            Some(Tok::Ident(name) | Tok::Raw(name)) => {
                segs.push(name.clone());
                *i += 1;
                if tok(tokens, *i) == Some(&Tok::Sep) {
                    *i += 1;
                    continue;
                }
                let mut alias = None;
                if keyword_at(tokens, *i, "as") {
                    match name_at(tokens, *i + 1) {
                        Some(a) => alias = Some(a.to_string()),
                        None => return false,
                    }
                    *i += 2;
                }
                if segs.last().is_some_and(|s| s == "self") {
                    segs.pop();
                }
                let Some(last) = segs.last() else {
                    return false;
                };
                let alias = match alias {
                    Some(a) if a == "_" => None,
                    Some(a) => Some(a),
                    None => Some(last.clone()),
                };
                let kind = RefKind::Use {
                    alias,
                    glob: false,
                    extern_only,
                };
                out.push((segs, line, kind));
                return true;
            }
            _ => return false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resolving: a path to the file of the deepest module it names that has one.

/// One source file of the crate.
#[derive(Debug)]
struct File {
    /// As reports show it (`src/app/mod.rs`).
    path: String,
    /// Its module path (`app`, `backend::kube::live`; empty for a crate root).
    module: Vec<String>,
    /// The index of its crate root (`lib.rs` for library files, `main.rs` for itself).
    root: usize,
    /// The name layers match: the module path, or `lib` / `main` for the roots.
    name: String,
}

/// What a module has in scope by name: its child modules, what its `use`s bring in (as
/// written, relative to it) and the modules it glob-imports.
#[derive(Debug, Default)]
struct Scope {
    mods: BTreeSet<String>,
    aliases: HashMap<String, (Vec<String>, bool)>,
    globs: Vec<(Vec<String>, bool)>,
}

struct Tree {
    files: Vec<File>,
    /// `(root, module path)` → file.
    by_module: HashMap<(usize, Vec<String>), usize>,
    /// `(root, module path)` → what that module has in scope.
    scopes: HashMap<(usize, Vec<String>), Scope>,
    lib_root: Option<usize>,
    lib_name: Option<&'static str>,
}

/// How deep alias and glob lookups may nest (aliases of aliases, globs of globs).
const MAX_LOOKUP_DEPTH: usize = 16;

impl Tree {
    /// The absolute `(root, module path + rest)` a path written in `scope` names, or `None`
    /// for an extern crate (or anything that is not this crate's).
    fn absolutize(
        &self,
        root: usize,
        scope: &[String],
        segs: &[String],
        extern_only: bool,
        depth: usize,
    ) -> Option<(usize, Vec<String>)> {
        let (first, rest) = segs.split_first()?;
        if depth > MAX_LOOKUP_DEPTH {
            return None;
        }
        let lib = self
            .lib_root
            .filter(|_| self.lib_name.is_some_and(|n| n == first));
        if extern_only {
            return lib.map(|lib| (lib, rest.to_vec()));
        }
        let (root, mut abs) = match first.as_str() {
            "crate" => (root, Vec::new()),
            "self" => (root, scope.to_vec()),
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let keep = scope.len().checked_sub(ups)?;
                let mut abs = scope[..keep].to_vec();
                abs.extend(segs[ups..].iter().cloned());
                return Some((root, abs));
            }
            _ => match self.lookup(root, scope, first, depth) {
                Some(found) => found,
                None => (lib?, Vec::new()),
            },
        };
        abs.extend(rest.iter().cloned());
        Some((root, abs))
    }

    /// What `name` means in module `scope`: a child module, a `use`d name, or a name a glob
    /// brings in.
    fn lookup(
        &self,
        root: usize,
        scope: &[String],
        name: &str,
        depth: usize,
    ) -> Option<(usize, Vec<String>)> {
        let sc = self.scopes.get(&(root, scope.to_vec()))?;
        if sc.mods.contains(name) {
            let mut abs = scope.to_vec();
            abs.push(name.to_string());
            return Some((root, abs));
        }
        if let Some((segs, extern_only)) = sc.aliases.get(name) {
            return self.absolutize(root, scope, segs, *extern_only, depth + 1);
        }
        sc.globs.iter().find_map(|(segs, extern_only)| {
            let (groot, gscope) = self.absolutize(root, scope, segs, *extern_only, depth + 1)?;
            self.lookup(groot, &gscope, name, depth + 1)
        })
    }

    /// The file of the deepest module of `abs` that has one (the root when none does), and
    /// how many segments of `abs` that module took.
    fn locate(&self, root: usize, abs: &[String]) -> (usize, usize) {
        (1..=abs.len())
            .rev()
            .find_map(|k| {
                self.by_module
                    .get(&(root, abs[..k].to_vec()))
                    .map(|&f| (f, k))
            })
            .unwrap_or((root, 0))
    }
}

/// A file's module path from its path under the source directory; `None` for a crate root.
fn module_of(rel: &str) -> Option<Vec<String>> {
    if rel == "lib.rs" || rel == "main.rs" {
        return None;
    }
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut segs: Vec<String> = stem.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    Some(segs)
}

// ---------------------------------------------------------------------------------------------
// Checking.

/// Imports from one file to another: the names and the lines they are written on.
#[derive(Debug, Default)]
struct Edge {
    names: BTreeSet<String>,
    lines: BTreeSet<usize>,
}

#[derive(Debug, PartialEq, Eq)]
struct Cycle {
    files: Vec<String>,
    /// `(from, to, names)` of every import between two of its files.
    edges: Vec<(String, String, Vec<String>)>,
}

/// An import cycle among the children of one folder (subfolders and files).
#[derive(Debug, PartialEq, Eq)]
struct FolderCycle {
    /// The folder (`src/backend/`; `src/` for the top level).
    folder: String,
    /// Its children in the cycle: `src/backend/fanout/`, `src/backend/messages.rs`.
    members: Vec<String>,
    edges: Vec<FolderEdge>,
}

/// One edge of a folder cycle: the first import that makes it, and how many do.
#[derive(Debug, PartialEq, Eq)]
struct FolderEdge {
    from: String,
    to: String,
    /// The file and line of that first import, and the names it imports.
    file: String,
    line: usize,
    names: Vec<String>,
    /// How many file-to-file imports make the edge.
    imports: usize,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Violation {
    /// A file, or a folder (`src/commands/`).
    file: String,
    /// None for a folder.
    line: Option<usize>,
    message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

#[derive(Debug)]
struct Report {
    files: usize,
    /// `(from, to, names)` of every import between two files.
    imports: Vec<(String, String, Vec<String>)>,
    cycles: Vec<Cycle>,
    folder_cycles: Vec<FolderCycle>,
    violations: Vec<Violation>,
}

impl Report {
    fn passed(&self) -> bool {
        self.cycles.is_empty() && self.folder_cycles.is_empty() && self.violations.is_empty()
    }

    fn render(&self, dir: &str) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "layers: {dir}/ ({} files, {} imports between files): ",
            self.files,
            self.imports.len()
        );
        if self.passed() {
            out.push_str("ok");
            return out;
        }
        let _ = write!(
            out,
            "{} import cycles between files, {} between folders, {} other violations",
            self.cycles.len(),
            self.folder_cycles.len(),
            self.violations.len()
        );
        for c in &self.cycles {
            let _ = write!(
                out,
                "\n\ncycle of {} files: {}",
                c.files.len(),
                c.files.join(", ")
            );
            for (from, to, names) in &c.edges {
                let _ = write!(out, "\n  {from} -> {to}: {}", names.join(", "));
            }
        }
        for c in &self.folder_cycles {
            let _ = write!(
                out,
                "\n\ncycle of {} folders and files in {}: {} (make the imports between them run \
                 one way: move what one needs from the other into it, or what both need into a \
                 new sibling)",
                c.members.len(),
                c.folder,
                c.members.join(", ")
            );
            for e in &c.edges {
                let _ = write!(
                    out,
                    "\n  {}:{}: {} -> {}: {}",
                    e.file,
                    e.line,
                    e.from,
                    e.to,
                    e.names.join(", ")
                );
                if e.imports > 1 {
                    let _ = write!(out, " (one of {} file-to-file imports)", e.imports);
                }
            }
        }
        if !self.violations.is_empty() {
            out.push('\n');
        }
        for v in &self.violations {
            let _ = write!(out, "\n{v}");
        }
        out
    }
}

/// The rank of module `name` in `layers` (longest prefix), if any matches.
fn rank(layers: &[Layer], name: &str) -> Option<u8> {
    layers
        .iter()
        .filter(|l| within(name, l.prefix))
        .max_by_key(|l| l.prefix.len())
        .map(|l| l.rank)
}

/// Whether module `name` is `prefix` or inside it (by whole segments).
fn within(name: &str, prefix: &str) -> bool {
    name == prefix
        || name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// Checks one crate's files (`(path under its source directory, text)`).
fn check(rules: &CrateRules, sources: &[(String, String)]) -> Result<Report> {
    let index_of = |rel: &str| sources.iter().position(|(r, _)| r == rel);
    let lib = index_of("lib.rs");
    let main = index_of("main.rs");
    let Some(default_root) = lib.or(main) else {
        bail!("{}: neither lib.rs nor main.rs", rules.dir);
    };
    let files: Vec<File> = sources
        .iter()
        .enumerate()
        .map(|(k, (rel, _))| {
            let module = module_of(rel);
            let root = if module.is_none() { k } else { default_root };
            let name = match &module {
                Some(m) => m.join("::"),
                None => rel.trim_end_matches(".rs").to_string(),
            };
            File {
                path: format!("{}/{rel}", rules.dir),
                module: module.unwrap_or_default(),
                root,
                name,
            }
        })
        .collect();
    let scans: Vec<Scan> = sources
        .iter()
        .zip(&files)
        .map(|((_, text), f)| scan(&lex(text), &f.module))
        .collect();

    let mut tree = Tree {
        by_module: files
            .iter()
            .enumerate()
            .map(|(k, f)| ((f.root, f.module.clone()), k))
            .collect(),
        scopes: HashMap::new(),
        lib_root: lib.filter(|_| rules.lib_name.is_some()),
        lib_name: rules.lib_name,
        files,
    };
    for (f, s) in tree.files.iter().zip(&scans) {
        tree.scopes.entry((f.root, f.module.clone())).or_default();
        for (scope, name) in &s.mods {
            let sc = tree.scopes.entry((f.root, scope.clone())).or_default();
            sc.mods.insert(name.clone());
        }
        for r in &s.refs {
            if let RefKind::Use {
                alias,
                glob,
                extern_only,
            } = &r.kind
            {
                let sc = tree.scopes.entry((f.root, r.scope.clone())).or_default();
                if *glob {
                    sc.globs.push((r.segs.clone(), *extern_only));
                } else if let Some(alias) = alias {
                    sc.aliases
                        .insert(alias.clone(), (r.segs.clone(), *extern_only));
                }
            }
        }
    }

    let mut edges: BTreeMap<(usize, usize), Edge> = BTreeMap::new();
    let mut violations = BTreeSet::new();
    for (from, s) in scans.iter().enumerate() {
        let f = &tree.files[from];
        for r in &s.refs {
            let (glob, extern_only) = match r.kind {
                RefKind::Use {
                    glob, extern_only, ..
                } => (glob, extern_only),
                RefKind::Inline => (false, false),
            };
            let Some((root, abs)) = tree.absolutize(f.root, &r.scope, &r.segs, extern_only, 0)
            else {
                for (prefix, krate) in rules.forbidden_crates {
                    if within(&f.name, prefix) && r.segs.first().is_some_and(|s| s == krate) {
                        violations.insert(Violation {
                            file: f.path.clone(),
                            line: Some(r.line),
                            message: format!(
                                "{} ({}) imports {krate}, which {prefix} must not use",
                                f.name,
                                rank_label(rules, &f.name)
                            ),
                        });
                    }
                }
                continue;
            };
            let (to, took) = tree.locate(root, &abs);
            if to == from {
                continue;
            }
            let rest = abs[took..].join("::");
            let name = match (glob, rest.is_empty()) {
                (true, true) => "*".to_string(),
                (true, false) => format!("{rest}::*"),
                (false, false) => rest,
                (false, true) => abs.last().map_or_else(|| "crate".to_string(), Clone::clone),
            };
            let e = edges.entry((from, to)).or_default();
            e.names.insert(name);
            e.lines.insert(r.line);
        }
    }

    violations.extend(layer_violations(rules, &tree.files, &edges));
    violations.extend(forbidden_imports(rules, &tree.files, &edges));
    violations.extend(size_violations(rules, sources));
    let cycles = cycles(&tree.files, &edges);
    let folder_cycles = folder_cycles(rules.dir, &tree.files, &edges);
    let mut imports: Vec<(String, String, Vec<String>)> = edges
        .iter()
        .map(|(&(a, b), e)| {
            (
                tree.files[a].path.clone(),
                tree.files[b].path.clone(),
                e.names.iter().cloned().collect(),
            )
        })
        .collect();
    imports.sort();
    Ok(Report {
        files: tree.files.len(),
        imports,
        cycles,
        folder_cycles,
        violations: violations.into_iter().collect(),
    })
}

/// `rank N` of a module, or `no rank`.
fn rank_label(rules: &CrateRules, name: &str) -> String {
    rank(rules.layers, name).map_or_else(|| "no rank".to_string(), |r| format!("rank {r}"))
}

/// Upward imports across the layers and the rooms, and files no layer covers.
fn layer_violations(
    rules: &CrateRules,
    files: &[File],
    edges: &BTreeMap<(usize, usize), Edge>,
) -> Vec<Violation> {
    if rules.layers.is_empty() {
        return Vec::new();
    }
    let exempt = |f: &File| rules.exempt.contains(&f.name.as_str());
    let mut out: Vec<Violation> = files
        .iter()
        .filter(|f| !exempt(f) && rank(rules.layers, &f.name).is_none())
        .map(|f| Violation {
            file: f.path.clone(),
            line: Some(1),
            message: format!(
                "{} has no layer: give it a rank in xtask/src/layers.rs",
                f.name
            ),
        })
        .collect();
    for (&(from, to), e) in edges {
        let (a, b) = (&files[from], &files[to]);
        if exempt(a) || exempt(b) {
            continue;
        }
        let (Some(ra), Some(rb)) = (rank(rules.layers, &a.name), rank(rules.layers, &b.name))
        else {
            continue;
        };
        let line = e.lines.first().copied();
        let names: Vec<&str> = e.names.iter().map(String::as_str).collect();
        if rb > ra {
            out.push(Violation {
                file: a.path.clone(),
                line,
                message: format!(
                    "{} (rank {ra}) imports {} (rank {rb}): {}",
                    a.name,
                    b.name,
                    names.join(", ")
                ),
            });
            continue;
        }
        for room in rules.rooms {
            let inside = |f: &File| within(&f.name, room.within) && f.name != room.within;
            if !(inside(a) && inside(b)) {
                continue;
            }
            if let (Some(sa), Some(sb)) = (rank(room.layers, &a.name), rank(room.layers, &b.name))
                && sb > sa
            {
                out.push(Violation {
                    file: a.path.clone(),
                    line,
                    message: format!(
                        "{} (rank {ra}, {} room {sa}) imports {} (rank {rb}, {} room {sb}): {}",
                        a.name,
                        room.within,
                        b.name,
                        room.within,
                        names.join(", ")
                    ),
                });
            }
        }
    }
    out
}

/// Imports that `rules.forbidden_imports` names, one for each pair of files.
fn forbidden_imports(
    rules: &CrateRules,
    files: &[File],
    edges: &BTreeMap<(usize, usize), Edge>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (&(from, to), e) in edges {
        let (a, b) = (&files[from], &files[to]);
        for rule in rules.forbidden_imports {
            if within(&a.name, rule.from)
                && within(&b.name, rule.to)
                && !rule.except.iter().any(|x| within(&b.name, x))
            {
                let names: Vec<&str> = e.names.iter().map(String::as_str).collect();
                out.push(Violation {
                    file: a.path.clone(),
                    line: e.lines.first().copied(),
                    message: format!(
                        "{} imports {}: {} ({} must not import {}{}: {})",
                        a.name,
                        b.name,
                        names.join(", "),
                        rule.from,
                        rule.to,
                        if rule.except.is_empty() {
                            String::new()
                        } else {
                            format!(" but {}", rule.except.join(", "))
                        },
                        rule.why
                    ),
                });
            }
        }
    }
    out
}

/// Folders with too many files and files too long before their tests.
fn size_violations(rules: &CrateRules, sources: &[(String, String)]) -> Vec<Violation> {
    let mut out = Vec::new();
    if let Some(max) = rules.max_files_in_folder {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (rel, _) in sources {
            *counts
                .entry(rel.rsplit_once('/').map_or("", |(folder, _)| folder))
                .or_default() += 1;
        }
        for (folder, n) in counts.into_iter().filter(|&(_, n)| n > max) {
            out.push(Violation {
                file: format!(
                    "{}/{folder}{}",
                    rules.dir,
                    if folder.is_empty() { "" } else { "/" }
                ),
                line: None,
                message: format!(
                    "{n} .rs files directly in it, more than {max}: move the ones that belong \
                     together into a subfolder"
                ),
            });
        }
    }
    if let Some(max) = rules.max_lines_before_tests {
        for (rel, text) in sources {
            let n = text
                .lines()
                .position(|l| l.starts_with("#[cfg(test)]"))
                .unwrap_or_else(|| text.lines().count());
            if n > max {
                out.push(Violation {
                    file: format!("{}/{rel}", rules.dir),
                    line: Some(max + 1),
                    message: format!(
                        "{n} lines before its tests, more than {max}: move a part that stands \
                         on its own into a file of its own"
                    ),
                });
            }
        }
    }
    out
}

/// The strongly connected components of more than one file, each with its edges.
fn cycles(files: &[File], edges: &BTreeMap<(usize, usize), Edge>) -> Vec<Cycle> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for &(a, b) in edges.keys() {
        next[a].push(b);
    }
    let mut out: Vec<Cycle> = components(&next)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let members: BTreeSet<usize> = c.into_iter().collect();
            let mut files_in: Vec<String> =
                members.iter().map(|&k| files[k].path.clone()).collect();
            files_in.sort();
            let mut edges_in: Vec<(String, String, Vec<String>)> = edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|((a, b), e)| {
                    (
                        files[*a].path.clone(),
                        files[*b].path.clone(),
                        e.names.iter().cloned().collect(),
                    )
                })
                .collect();
            edges_in.sort();
            Cycle {
                files: files_in,
                edges: edges_in,
            }
        })
        .collect();
    out.sort_by(|a, b| a.files.cmp(&b.files));
    out
}

/// Import cycles among the children of one folder, each child — a subfolder with everything
/// under it, or a file — taken as one node (see the module header). Cycles of files only are
/// left to `cycles`, which reports them file by file.
fn folder_cycles(
    dir: &str,
    files: &[File],
    edges: &BTreeMap<(usize, usize), Edge>,
) -> Vec<FolderCycle> {
    // Folder (module path) → (child, child) → the file imports that make that edge.
    type ChildEdges<'a> = BTreeMap<(&'a [String], &'a [String]), Vec<(usize, usize)>>;
    let mut folders: BTreeMap<&[String], ChildEdges> = BTreeMap::new();
    for &(from, to) in edges.keys() {
        let (a, b) = (&files[from].module, &files[to].module);
        let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        // One is the other's ancestor (a crate root is everyone's): not between siblings.
        if k == a.len() || k == b.len() {
            continue;
        }
        folders
            .entry(&a[..k])
            .or_default()
            .entry((&a[..=k], &b[..=k]))
            .or_default()
            .push((from, to));
    }
    let is_folder = |m: &[String]| {
        let prefix = format!("{dir}/{}/", m.join("/"));
        files.iter().any(|f| f.path.starts_with(&prefix))
    };
    let shown = |m: &[String]| {
        let path = format!("{dir}/{}", m.join("/"));
        if is_folder(m) {
            path + "/"
        } else {
            path + ".rs"
        }
    };
    let mut out = Vec::new();
    for (folder, child_edges) in &folders {
        let children: Vec<&[String]> = child_edges
            .keys()
            .flat_map(|&(a, b)| [a, b])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index: HashMap<&[String], usize> =
            children.iter().enumerate().map(|(k, &c)| (c, k)).collect();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); children.len()];
        for &(a, b) in child_edges.keys() {
            if let (Some(&ia), Some(&ib)) = (index.get(a), index.get(b)) {
                next[ia].push(ib);
            }
        }
        for component in components(&next) {
            let members: BTreeSet<&[String]> = component.iter().map(|&k| children[k]).collect();
            if members.len() < 2 || !members.iter().any(|m| is_folder(m)) {
                continue;
            }
            let edges_in = child_edges
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .filter_map(|(&(a, b), made_by)| {
                    let (line, from, to) = made_by
                        .iter()
                        .filter_map(|&(f, t)| Some((*edges.get(&(f, t))?.lines.first()?, f, t)))
                        .min_by_key(|&(line, f, _)| (f, line))?;
                    Some(FolderEdge {
                        from: shown(a),
                        to: shown(b),
                        file: files[from].path.clone(),
                        line,
                        names: edges
                            .get(&(from, to))
                            .map(|e| e.names.iter().cloned().collect())
                            .unwrap_or_default(),
                        imports: made_by.len(),
                    })
                })
                .collect();
            out.push(FolderCycle {
                folder: if folder.is_empty() {
                    format!("{dir}/")
                } else {
                    shown(folder)
                },
                members: members.iter().map(|m| shown(m)).collect(),
                edges: edges_in,
            });
        }
    }
    out.sort_by(|a, b| (&a.folder, &a.members).cmp(&(&b.folder, &b.members)));
    out
}

/// The strongly connected components of a graph given as each node's successors (Tarjan).
fn components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut t = Tarjan {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.components
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.next[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                Some(_) => {}
            }
        }
        if self.index[v] == Some(self.low[v]) {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_RULES: CrateRules = CrateRules {
        dir: "src",
        lib_name: Some("demo"),
        layers: &[
            layer("main", 9),
            layer("top", 3),
            layer("app", 2),
            layer("views", 2),
            layer("engine", 1),
            layer("low", 1),
            layer("model", 1),
        ],
        exempt: &["lib"],
        rooms: &[Rooms {
            within: "engine",
            layers: &[layer("engine::document", 1), layer("engine::fleet", 2)],
        }],
        forbidden_crates: &[("app", "crossterm")],
        forbidden_imports: &[Forbidden {
            from: "views",
            to: "app",
            except: &["app::state"],
            why: "views read only app::state",
        }],
        max_files_in_folder: None,
        max_lines_before_tests: None,
    };

    fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    fn report(files: &[(&str, &str)]) -> Report {
        check(&TEST_RULES, &tree(files)).expect("check")
    }

    fn no_layers(files: &[(&str, &str)]) -> Report {
        let rules = CrateRules {
            layers: &[],
            ..TEST_RULES
        };
        check(&rules, &tree(files)).expect("check")
    }

    fn show(edges: &[(String, String, Vec<String>)]) -> Vec<String> {
        edges
            .iter()
            .map(|(a, b, names)| format!("{a} -> {b}: {}", names.join(", ")))
            .collect()
    }

    fn imports(r: &Report) -> Vec<String> {
        show(&r.imports)
    }

    fn uses(text: &str) -> Vec<(Vec<String>, Option<String>, bool)> {
        scan(&lex(text), &[])
            .refs
            .into_iter()
            .filter_map(|r| match r.kind {
                RefKind::Use { alias, glob, .. } => Some((r.segs, alias, glob)),
                RefKind::Inline => None,
            })
            .collect()
    }

    fn segs(path: &str) -> Vec<String> {
        path.split("::").map(str::to_string).collect()
    }

    fn cycle_edges(r: &Report) -> Vec<String> {
        r.cycles.iter().flat_map(|c| show(&c.edges)).collect()
    }

    #[test]
    fn a_two_file_cycle_is_found_with_its_edges() {
        let r = report(&[
            ("lib.rs", "pub mod low;\npub mod model;\n"),
            ("low.rs", "use crate::model::Thing;\n"),
            ("model.rs", "pub fn f() { crate::low::helper(); }\n"),
        ]);
        assert_eq!(r.cycles.len(), 1, "{}", r.render("src"));
        assert_eq!(r.cycles[0].files, ["src/low.rs", "src/model.rs"]);
        assert_eq!(
            cycle_edges(&r),
            [
                "src/low.rs -> src/model.rs: Thing",
                "src/model.rs -> src/low.rs: helper"
            ]
        );
        assert!(r.render("src").contains("cycle of 2 files"));
    }

    #[test]
    fn a_self_edge_and_a_mod_declaration_are_not_cycles() {
        let r = report(&[
            ("lib.rs", "pub mod low;\n"),
            (
                "low.rs",
                "mod inner { pub fn g() {} }\nuse self::inner::g;\nfn f() { crate::low::f() }\n",
            ),
        ]);
        assert!(r.passed(), "{}", r.render("src"));
        assert_eq!(imports(&r), Vec::<String>::new());
    }

    #[test]
    fn a_grouped_import_is_split_into_its_leaves() {
        let got = uses("use crate::a::{b, c::{d, e as f}, self, g::*, h as _};");
        let want = vec![
            (segs("crate::a::b"), Some("b".to_string()), false),
            (segs("crate::a::c::d"), Some("d".to_string()), false),
            (segs("crate::a::c::e"), Some("f".to_string()), false),
            (segs("crate::a"), Some("a".to_string()), false),
            (segs("crate::a::g"), None, true),
            (segs("crate::a::h"), None, false),
        ];
        assert_eq!(got, want);
        // Visibility and a leading `{` do not matter; a precise-capture `use<'a>` is no import.
        let got =
            uses("pub(crate) use {crate::x, super::y::Z};\nfn f() -> impl Sized + use<'a> {}");
        assert_eq!(
            got,
            vec![
                (segs("crate::x"), Some("x".to_string()), false),
                (segs("super::y::Z"), Some("Z".to_string()), false),
            ]
        );
    }

    #[test]
    fn paths_in_strings_and_comments_are_ignored() {
        let text = r####"
// crate::b::X
/// [`crate::b::X`]
//! crate::b
/* crate::b::X /* nested crate::b */ still crate::b */
fn f() {
    let s = "crate::b::X";
    let r = r#"crate::b::X "quoted" "#;
    let y = b"crate::b";
    let q = '"';
    let e = '\'';
    let l: &'static str = "a";
    crate::c::g();
}
"####;
        let refs = scan(&lex(text), &[]).refs;
        let paths: Vec<(String, usize)> =
            refs.iter().map(|r| (r.segs.join("::"), r.line)).collect();
        assert_eq!(paths, [("crate::c::g".to_string(), 13)]);
    }

    #[test]
    fn inline_paths_are_found_and_method_turbofish_is_not() {
        let text = "fn f() { let v = x.collect::<Vec<_>>(); super::super::t::T::new(); \
                    <crate::a::B as crate::c::D>::e(); $crate::m::n(); }\npub(in crate::p) fn g() {}";
        let paths: Vec<String> = scan(&lex(text), &["a".into(), "b".into()])
            .refs
            .iter()
            .map(|r| r.segs.join("::"))
            .collect();
        assert_eq!(
            paths,
            ["super::super::t::T::new", "crate::a::B", "crate::c::D"]
        );
    }

    #[test]
    fn super_resolves_from_a_mod_rs_and_from_a_plain_file() {
        let r = no_layers(&[
            ("lib.rs", "pub mod low;\npub mod model;\n"),
            ("model.rs", "pub struct M;\n"),
            // low/mod.rs is module `low`: its `super` is the crate root.
            ("low/mod.rs", "pub mod leaf;\nuse super::model::M;\n"),
            // low/leaf.rs is module `low::leaf`: its `super` is `low`.
            (
                "low/leaf.rs",
                "use super::Thing;\nfn f() { super::super::model::M; }\n",
            ),
        ]);
        assert_eq!(
            imports(&r),
            [
                "src/low/leaf.rs -> src/low/mod.rs: Thing",
                "src/low/leaf.rs -> src/model.rs: M",
                "src/low/mod.rs -> src/model.rs: M",
            ]
        );
        assert!(r.passed(), "{}", r.render("src"));
        let r = no_layers(&[
            ("lib.rs", "pub mod low;\npub mod model;\n"),
            ("model.rs", "use crate::low::leaf::L;\n"),
            ("low/mod.rs", "pub mod leaf;\nuse super::model::M;\n"),
            ("low/leaf.rs", "use super::Thing;\n"),
        ]);
        assert_eq!(
            r.cycles[0].files,
            ["src/low/leaf.rs", "src/low/mod.rs", "src/model.rs"],
            "{}",
            r.render("src")
        );
        assert_eq!(
            cycle_edges(&r),
            [
                "src/low/leaf.rs -> src/low/mod.rs: Thing",
                "src/low/mod.rs -> src/model.rs: M",
                "src/model.rs -> src/low/leaf.rs: L",
            ]
        );
    }

    #[test]
    fn an_inline_test_module_uses_its_own_file_through_super() {
        let r = report(&[
            ("lib.rs", "pub mod low;\npub mod model;\n"),
            ("model.rs", "use crate::low::L;\n"),
            (
                "low.rs",
                "pub struct L;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::L;\n    \
                 #[test]\n    fn t() { let _ = super::L; }\n}\n",
            ),
        ]);
        assert!(r.passed(), "{}", r.render("src"));
        assert_eq!(imports(&r), ["src/model.rs -> src/low.rs: L"]);
    }

    #[test]
    fn test_code_counts_and_a_glob_reaches_through_the_parent() {
        let r = report(&[
            ("lib.rs", "pub mod low;\npub mod model;\n"),
            ("model.rs", "use crate::low::L;\n"),
            (
                "low.rs",
                "use crate::model;\npub struct L;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    \
                 fn t() { model::helper(); }\n}\n",
            ),
        ]);
        assert_eq!(
            cycle_edges(&r),
            [
                "src/low.rs -> src/model.rs: helper, model",
                "src/model.rs -> src/low.rs: L"
            ]
        );
    }

    #[test]
    fn children_of_a_non_mod_rs_module_live_in_its_directory() {
        let r = no_layers(&[
            ("lib.rs", "pub mod engine;\n"),
            ("engine.rs", "pub mod fleet;\npub struct E;\n"),
            ("engine/fleet.rs", "pub mod live;\npub struct F;\n"),
            (
                "engine/fleet/live.rs",
                "use super::F;\nuse super::super::E;\nuse crate::engine::fleet::live::X;\n",
            ),
            ("engine/other.rs", "use crate::engine::fleet::live::Y;\n"),
        ]);
        assert_eq!(
            imports(&r),
            [
                "src/engine/fleet/live.rs -> src/engine.rs: E",
                "src/engine/fleet/live.rs -> src/engine/fleet.rs: F",
                "src/engine/other.rs -> src/engine/fleet/live.rs: Y",
            ]
        );
    }

    #[test]
    fn relative_paths_through_child_modules_and_aliases() {
        let r = report(&[
            ("lib.rs", "pub mod app;\npub mod views;\n"),
            (
                "app/mod.rs",
                "pub mod action;\npub mod update;\npub use action::Action;\n\
                 fn f() { update::run(); }\n",
            ),
            ("app/action.rs", "pub enum Action {}\n"),
            (
                "app/update.rs",
                "use crate::views;\nuse super::Action;\npub fn run() { views::list::draw(); }\n",
            ),
            ("views/mod.rs", "pub mod list;\n"),
            ("views/list.rs", "pub fn draw() {}\n"),
        ]);
        assert_eq!(
            cycle_edges(&r),
            [
                "src/app/mod.rs -> src/app/update.rs: run",
                "src/app/update.rs -> src/app/mod.rs: Action",
            ],
            "{}",
            r.render("src")
        );
        // `views::list::draw` reaches views/list.rs through the alias `views`.
        assert_eq!(
            imports(&r),
            [
                "src/app/mod.rs -> src/app/action.rs: Action",
                "src/app/mod.rs -> src/app/update.rs: run",
                "src/app/update.rs -> src/app/mod.rs: Action",
                "src/app/update.rs -> src/views/list.rs: draw",
                "src/app/update.rs -> src/views/mod.rs: views",
            ]
        );
    }

    #[test]
    fn an_upward_import_is_reported_with_its_line_and_same_rank_is_fine() {
        let r = report(&[
            (
                "lib.rs",
                "pub mod app;\npub mod low;\npub mod model;\npub mod top;\npub mod views;\n",
            ),
            (
                "main.rs",
                "use demo::top::run;\nfn main() { demo::app::go(); }\n",
            ),
            ("top.rs", "use crate::app::go;\n"),
            (
                "app.rs",
                "use crate::views::V;\nuse crate::model::M;\npub fn go() {}\n",
            ),
            ("views.rs", "pub struct V;\n"),
            (
                "model.rs",
                "// the low module: crate::low is fine\npub struct M;\n\n\nuse crate::low::L;\n",
            ),
            (
                "low.rs",
                "pub struct L;\n\nfn f() -> crate::views::V { todo!() }\n",
            ),
        ]);
        assert!(r.cycles.is_empty(), "{}", r.render("src"));
        assert_eq!(
            r.violations,
            [Violation {
                file: "src/low.rs".into(),
                line: Some(3),
                message: "low (rank 1) imports views (rank 2): V".into(),
            }],
            "{}",
            r.render("src")
        );
        assert!(
            r.render("src")
                .ends_with("src/low.rs:3: low (rank 1) imports views (rank 2): V")
        );
    }

    #[test]
    fn rooms_rank_engine_files_among_themselves_and_unmatched_ones_are_free() {
        let r = report(&[
            ("lib.rs", "pub mod engine;\n"),
            (
                "engine/mod.rs",
                "pub mod document;\npub mod fleet;\npub mod load;\npub use fleet::F;\n",
            ),
            (
                "engine/document.rs",
                "use super::fleet::F;\nuse super::load::parse;\n",
            ),
            (
                "engine/fleet.rs",
                "use super::document::D;\nuse super::load::parse;\n",
            ),
            (
                "engine/load.rs",
                "use super::fleet::F;\nuse super::document::D;\n",
            ),
        ]);
        let rooms: Vec<&str> = r.violations.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            rooms,
            [
                "engine::document (rank 1, engine room 1) imports engine::fleet (rank 1, engine room 2): F"
            ]
        );
    }

    #[test]
    fn crossterm_under_app_and_files_without_a_layer_are_reported() {
        let r = report(&[
            ("lib.rs", "pub mod app;\npub mod model;\npub mod extra;\n"),
            (
                "app.rs",
                "use crossterm::event::{KeyCode, KeyEvent};\nfn f() { let _ = crossterm::terminal::size(); }\n",
            ),
            ("model.rs", "use crossterm::event::KeyCode;\n"),
            ("extra.rs", "\n"),
        ]);
        let got: Vec<String> = r.violations.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "src/app.rs:1: app (rank 2) imports crossterm, which app must not use",
                "src/app.rs:2: app (rank 2) imports crossterm, which app must not use",
                "src/extra.rs:1: extra has no layer: give it a rank in xtask/src/layers.rs",
            ]
        );
    }

    #[test]
    fn a_forbidden_import_is_reported_whatever_the_ranks_and_its_exceptions_are_not() {
        let r = report(&[
            ("lib.rs", "pub mod app;\npub mod views;\n"),
            (
                "app/mod.rs",
                "pub mod state;\npub mod update;\npub struct Action;\n",
            ),
            ("app/state/mod.rs", "pub mod panes;\npub struct State;\n"),
            ("app/state/panes.rs", "pub enum Pane {}\n"),
            ("app/update.rs", "pub fn key_context() {}\n"),
            (
                "views/mod.rs",
                "pub mod list;\nuse crate::app::state::State;\n",
            ),
            (
                "views/list.rs",
                "use crate::app::state::{State, panes::Pane};\nuse crate::app::update;\n\n\
                 fn f() { update::key_context(); let _ = super::super::app::Action; }\n",
            ),
        ]);
        let got: Vec<String> = r.violations.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "src/views/list.rs:2: views::list imports app::update: key_context, update \
                 (views must not import app but app::state: views read only app::state)",
                "src/views/list.rs:4: views::list imports app: Action \
                 (views must not import app but app::state: views read only app::state)",
            ]
        );
        let rules = CrateRules {
            forbidden_imports: &[Forbidden {
                from: "output",
                to: "cli",
                except: &[],
                why: "cli passes what output needs",
            }],
            layers: &[],
            ..TEST_RULES
        };
        let files = tree(&[
            ("lib.rs", "pub mod cli;\npub mod output;\n"),
            ("cli.rs", "use crate::output::print;\n"),
            ("output.rs", "pub fn print(f: crate::cli::Format) {}\n"),
        ]);
        let r = check(&rules, &files).expect("check");
        assert_eq!(
            r.violations,
            [Violation {
                file: "src/output.rs".into(),
                line: Some(1),
                message: "output imports cli: Format (output must not import cli: cli passes \
                          what output needs)"
                    .into(),
            }]
        );
    }

    #[test]
    fn a_crowded_folder_and_a_long_file_are_reported_with_their_counts() {
        let rules = CrateRules {
            layers: &[],
            max_files_in_folder: Some(2),
            max_lines_before_tests: Some(3),
            ..TEST_RULES
        };
        let files = tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            // Three files directly in a/, its mod.rs among them; two in b/.
            ("a/mod.rs", "pub mod x;\npub mod y;\n"),
            // Three lines before the tests: at the limit.
            (
                "a/x.rs",
                "fn a() {}\n\nfn b() {}\n#[cfg(test)]\nmod tests {\n\n\n\n}\n",
            ),
            // Only a `#[cfg(test)]` at the start of a line starts the tests.
            (
                "a/y.rs",
                "fn a() {}\n\n\n    #[cfg(test)]\nfn b() {}\n#[cfg(test)]\nmod tests {}\n",
            ),
            ("b/mod.rs", "pub mod z;\n\n\nfn a() {}\n"),
            ("b/z.rs", "\n"),
        ]);
        let r = check(&rules, &files).expect("check");
        let got: Vec<String> = r.violations.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "src/a/: 3 .rs files directly in it, more than 2: move the ones that belong \
                 together into a subfolder",
                "src/a/y.rs:4: 5 lines before its tests, more than 3: move a part that stands on \
                 its own into a file of its own",
                "src/b/mod.rs:4: 4 lines before its tests, more than 3: move a part that stands \
                 on its own into a file of its own",
            ]
        );
        // The crate root counts as a folder too.
        let files = tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "\n"),
            ("b.rs", "\n"),
        ]);
        let r = check(&rules, &files).expect("check");
        assert_eq!(
            r.violations,
            [Violation {
                file: "src/".into(),
                line: None,
                message: "3 .rs files directly in it, more than 2: move the ones that belong \
                          together into a subfolder"
                    .into(),
            }]
        );
        // The limits of the real crates.
        assert_eq!(MAIN.max_files_in_folder, Some(15));
        assert_eq!(MAIN.max_lines_before_tests, Some(1500));
    }

    #[test]
    fn without_layers_only_cycles_count() {
        let rules = CrateRules {
            dir: "xtask/src",
            ..XTASK
        };
        let files = tree(&[
            (
                "main.rs",
                "mod a;\nmod b;\nuse a::run;\nfn main() { b::go(); }\n",
            ),
            ("a.rs", "pub fn run() { crate::b::go() }\n"),
            ("b.rs", "pub fn go() {}\n"),
        ]);
        let r = check(&rules, &files).expect("check");
        assert!(r.passed(), "{}", r.render("xtask/src"));
        assert_eq!(
            imports(&r),
            [
                "xtask/src/a.rs -> xtask/src/b.rs: go",
                "xtask/src/main.rs -> xtask/src/a.rs: run",
                "xtask/src/main.rs -> xtask/src/b.rs: go",
            ]
        );
    }

    fn folder_cycle_lines(r: &Report) -> Vec<String> {
        r.folder_cycles
            .iter()
            .map(|c| {
                let edges: Vec<String> = c
                    .edges
                    .iter()
                    .map(|e| {
                        format!(
                            "{}:{}: {} -> {}: {} ({})",
                            e.file,
                            e.line,
                            e.from,
                            e.to,
                            e.names.join(", "),
                            e.imports
                        )
                    })
                    .collect();
                format!(
                    "in {}: {} | {}",
                    c.folder,
                    c.members.join(", "),
                    edges.join(" | ")
                )
            })
            .collect()
    }

    #[test]
    fn a_file_and_a_sibling_folder_importing_each_other_are_a_folder_cycle() {
        // backend/messages.rs ⇄ backend/fanout/: no file cycle, one between backend's children.
        let r = no_layers(&[
            ("lib.rs", "pub mod backend;\n"),
            (
                "backend/mod.rs",
                "pub mod fanout;\npub mod messages;\npub use messages::Msg;\n",
            ),
            ("backend/messages.rs", "\nuse super::fanout::Target;\n"),
            (
                "backend/fanout/mod.rs",
                "pub mod apply;\npub struct Target;\n",
            ),
            (
                "backend/fanout/apply.rs",
                "use crate::backend::messages::Msg;\nuse super::super::Msg as M;\n",
            ),
        ]);
        assert!(r.cycles.is_empty(), "{}", r.render("src"));
        assert_eq!(
            folder_cycle_lines(&r),
            [
                "in src/backend/: src/backend/fanout/, src/backend/messages.rs | \
              src/backend/fanout/apply.rs:1: src/backend/fanout/ -> src/backend/messages.rs: Msg (1) | \
              src/backend/messages.rs:2: src/backend/messages.rs -> src/backend/fanout/: Target (1)"
            ],
        );
        // `super::super::Msg` goes to backend/mod.rs, the folder itself: no sibling edge.
        assert!(
            imports(&r).contains(&"src/backend/fanout/apply.rs -> src/backend/mod.rs: Msg".into())
        );
        let text = r.render("src");
        assert!(
            text.contains(
                "cycle of 2 folders and files in src/backend/: src/backend/fanout/, \
                 src/backend/messages.rs (make the imports between them run one way"
            ),
            "{text}"
        );
        assert!(text.contains(
            "\n  src/backend/messages.rs:2: src/backend/messages.rs -> src/backend/fanout/: Target"
        ));
    }

    #[test]
    fn a_cycle_through_a_subfolder_is_found_at_the_level_below_the_common_folder() {
        // backend/kube/live → backend/cluster_profiles.rs → backend/kube/kubeconfig.rs: the files
        // form no cycle, backend's children kube/ and cluster_profiles.rs do.
        let r = no_layers(&[
            ("lib.rs", "pub mod backend;\npub mod model;\n"),
            (
                "backend/mod.rs",
                "pub mod cluster_profiles;\npub mod kube;\nuse kube::live::Watch;\n",
            ),
            (
                "backend/cluster_profiles.rs",
                "use crate::model::M;\nuse super::kube::kubeconfig::Kubeconfig;\n",
            ),
            (
                "backend/kube/mod.rs",
                "pub mod kubeconfig;\npub mod live;\n",
            ),
            (
                "backend/kube/kubeconfig.rs",
                "use super::super::super::model::M;\n",
            ),
            ("backend/kube/live/mod.rs", "mod task;\npub struct Watch;\n"),
            (
                "backend/kube/live/task.rs",
                "use super::super::kubeconfig::Kubeconfig;\n\
                 fn f() { crate::backend::cluster_profiles::load(); }\n\
                 fn g() { crate::backend::cluster_profiles::save(); }\n",
            ),
            ("model.rs", "\n"),
        ]);
        assert!(r.cycles.is_empty(), "{}", r.render("src"));
        assert_eq!(
            folder_cycle_lines(&r),
            [
                "in src/backend/: src/backend/cluster_profiles.rs, src/backend/kube/ | \
              src/backend/cluster_profiles.rs:2: src/backend/cluster_profiles.rs -> src/backend/kube/: Kubeconfig (1) | \
              src/backend/kube/live/task.rs:2: src/backend/kube/ -> src/backend/cluster_profiles.rs: load, save (1)"
            ],
        );
    }

    #[test]
    fn parent_and_child_folders_may_import_each_other_and_file_cycles_are_not_repeated() {
        let r = no_layers(&[
            ("lib.rs", "pub mod app;\npub mod glob;\npub mod jsonl;\n"),
            // app/mod.rs → app/state/, app/state/panes.rs → app/mod.rs: a folder and its own
            // children are not siblings; app/state/ → app/filter.rs alone is no cycle.
            (
                "app/mod.rs",
                "pub mod filter;\npub mod state;\npub struct Action;\nuse state::State;\n",
            ),
            ("app/filter.rs", "use crate::glob::g;\n"),
            (
                "app/state/mod.rs",
                "pub mod panes;\npub struct State;\nuse super::filter::F;\n",
            ),
            ("app/state/panes.rs", "use super::super::Action;\n"),
            // Two top-level files importing each other: a file cycle, reported only as one.
            ("glob.rs", "use crate::jsonl::J;\n"),
            ("jsonl.rs", "use crate::glob::G;\n"),
        ]);
        assert_eq!(r.folder_cycles, [], "{}", r.render("src"));
        assert_eq!(r.cycles.len(), 1, "{}", r.render("src"));
        // …until filter imports state back: app/state/ ⇄ app/filter.rs.
        let r = no_layers(&[
            ("lib.rs", "pub mod app;\n"),
            ("app/mod.rs", "pub mod filter;\npub mod state;\n"),
            ("app/filter.rs", "fn f(s: &super::state::panes::Pane) {}\n"),
            (
                "app/state/mod.rs",
                "pub mod panes;\nuse super::filter::F;\n",
            ),
            ("app/state/panes.rs", "pub struct Pane;\n"),
        ]);
        assert_eq!(
            folder_cycle_lines(&r),
            ["in src/app/: src/app/filter.rs, src/app/state/ | \
              src/app/filter.rs:1: src/app/filter.rs -> src/app/state/: Pane (1) | \
              src/app/state/mod.rs:2: src/app/state/ -> src/app/filter.rs: F (1)"],
        );
    }

    #[test]
    fn top_level_folders_in_a_cycle_name_the_first_import_of_each_edge() {
        let r = no_layers(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("a/mod.rs", "pub mod x;\npub mod y;\n"),
            ("a/x.rs", "\n\nuse crate::b::B;\n"),
            ("a/y.rs", "use crate::b::B;\nuse crate::b::inner::I;\n"),
            (
                "b/mod.rs",
                "pub mod inner;\npub struct B;\nuse crate::c::C;\n",
            ),
            ("b/inner.rs", "pub struct I;\n"),
            ("c.rs", "use crate::a::x::X;\n"),
        ]);
        assert_eq!(
            folder_cycle_lines(&r),
            ["in src/: src/a/, src/b/, src/c.rs | \
              src/a/x.rs:3: src/a/ -> src/b/: B (3) | \
              src/b/mod.rs:3: src/b/ -> src/c.rs: C (1) | \
              src/c.rs:1: src/c.rs -> src/a/: X (1)"],
        );
        assert!(
            r.render("src")
                .contains("src/a/x.rs:3: src/a/ -> src/b/: B (one of 3 file-to-file imports)")
        );
    }

    #[test]
    fn the_tree_is_read_from_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("a")).expect("mkdir");
        fs::write(dir.path().join("main.rs"), "mod a;\n").expect("write");
        fs::write(dir.path().join("a/mod.rs"), "use crate::X;\n").expect("write");
        fs::write(dir.path().join("a/notes.txt"), "not rust").expect("write");
        let files = read_tree(dir.path()).expect("read");
        let names: Vec<&str> = files.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(names, ["a/mod.rs", "main.rs"]);
    }

    #[test]
    fn xtask_itself_has_no_import_cycle() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = read_tree(&dir).expect("read xtask/src");
        let r = check(&XTASK, &files).expect("check");
        assert!(r.passed(), "{}", r.render(XTASK.dir));
    }
}
