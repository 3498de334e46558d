//! The module graph of a crate's sources, built with `syn`, and its cycles.
//!
//! Every source file is parsed; every path that starts in the crate is
//! followed to the module that defines what it names: `crate::`, `super::`
//! and `self::` paths, paths through a child module, and paths through a
//! name a `use` brought in, in `use` declarations, in types, expressions
//! and patterns anywhere in a body, and in the tokens of macro calls. A
//! path through a re-export (`pub use rest::RestLane` at the root, a glob
//! such as `pub use commands::*`) is followed to the module the re-export
//! comes from, so naming `crate::RestLane` depends on `rest`, not on the
//! root. Intra-doc links are text, not paths, and are not followed.
//!
//! There is one graph per folder (every module with children, the crate
//! root first), so the list of folders comes from the tree itself. The
//! nodes of a folder's graph are its children (a child folder with
//! everything under it is one node); an edge `a → b` means some file of
//! `a` names something defined in `b`. A module and its own ancestors (a
//! `mod.rs` and its children) may name each other. Code under
//! `#[cfg(test)]` is not followed: a unit test may set up with what sits
//! above it. A cycle is reported with, for each edge, the file and the
//! path that made it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// One source file: its path under `src/` (`client/mod.rs`) and its text.
pub(crate) struct Source {
    pub(crate) path: String,
    pub(crate) text: String,
}

/// Where a path was written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Evidence {
    pub(crate) file: String,
    pub(crate) path: String,
}

/// The top-level module graph: node → (node → the first evidence of the edge).
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub(crate) edges: BTreeMap<String, BTreeMap<String, Evidence>>,
}

type ModPath = Vec<String>;

/// What a module declares: child modules, items it defines, names its
/// `use` declarations bind (name → target path), and its glob imports.
#[derive(Debug, Default)]
struct Module {
    defines: BTreeSet<String>,
    binds: BTreeMap<String, (ModPath, Vec<String>)>,
    globs: Vec<Vec<String>>,
}

/// Where a path lands: inside a module (to go on walking) or on an item
/// defined in a module (the walk stops).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Module(ModPath),
    Item(ModPath),
}

impl Place {
    fn module(&self) -> &ModPath {
        match self {
            Place::Module(m) | Place::Item(m) => m,
        }
    }
}

/// The parsed crate: its modules and every crate path written in it.
#[derive(Default)]
struct Crate {
    modules: BTreeMap<ModPath, Module>,
    /// (module it is written in, file, path segments).
    paths: Vec<(ModPath, String, Vec<String>)>,
}

/// The graphs of a crate, one per folder: every module with child modules
/// (the crate root is `""`, then `commands`, `commands/text`, …). Each
/// holds the edges between that folder's children, so every path is an
/// edge of exactly one graph, its two ends' closest common folder's; a
/// path between a module and one of its own ancestors (a `mod.rs` and its
/// children) is none.
pub(crate) fn graphs(sources: &[Source]) -> Result<BTreeMap<String, Graph>, String> {
    let mut krate = Crate::default();
    for source in sources {
        let file = syn::parse_file(&source.text)
            .map_err(|e| format!("{} does not parse: {e}", source.path))?;
        let module = module_of(&source.path);
        krate.modules.entry(module.clone()).or_default();
        let mut collector = Collector {
            krate: &mut krate,
            file: &source.path,
            stack: vec![module],
            depth: vec![0],
        };
        collector.visit_file(&file);
    }
    let mut graphs: BTreeMap<String, Graph> = krate
        .modules
        .keys()
        .filter_map(|module| module.split_last().map(|(_, parent)| name(parent)))
        .map(|folder| (folder, Graph::default()))
        .collect();
    for (module, file, segments) in &krate.paths {
        let Some(place) = krate.resolve(module, segments, &mut BTreeSet::new()) else {
            continue;
        };
        let to = place.module();
        let common = module.iter().zip(to).take_while(|(a, b)| a == b).count();
        // One end holds the other (the root, a `mod.rs` and its children).
        if common == module.len() || common == to.len() {
            continue;
        }
        let folder = name(&module[..common]);
        let (from, to) = (name(&module[..=common]), name(&to[..=common]));
        graphs
            .entry(folder)
            .or_default()
            .edges
            .entry(from)
            .or_default()
            .entry(to)
            .or_insert_with(|| Evidence {
                file: file.clone(),
                path: segments.join("::"),
            });
    }
    Ok(graphs)
}

/// The graph of the crate's top-level modules (a directory module with all
/// its children is one node); fails naming a file that does not parse.
pub(crate) fn graph(sources: &[Source]) -> Result<Graph, String> {
    Ok(graphs(sources)?.remove("").unwrap_or_default())
}

/// `client/stats.rs` → `[client, stats]`; `lib.rs` → `[]`.
fn module_of(path: &str) -> ModPath {
    let trimmed = path.trim_end_matches(".rs");
    let mut parts: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// `[commands, text]` → `commands/text`; the root is `""`.
fn name(module: &[String]) -> String {
    module.join("/")
}

impl Crate {
    fn is_module(&self, path: &ModPath) -> bool {
        self.modules.contains_key(path)
    }

    /// Where `segments`, written in `module`, lands; `None` for a path
    /// outside the crate (std, tokio…) or a local name (a generic, a
    /// variable).
    fn resolve(
        &self,
        module: &ModPath,
        segments: &[String],
        seen: &mut BTreeSet<(ModPath, Vec<String>)>,
    ) -> Option<Place> {
        if !seen.insert((module.clone(), segments.to_vec())) {
            return None;
        }
        let (first, rest) = segments.split_first()?;
        let start = match first.as_str() {
            "crate" => Place::Module(Vec::new()),
            "self" => Place::Module(module.clone()),
            "super" => {
                let mut up = module.clone();
                up.pop();
                let mut rest = rest;
                while rest.first().map(String::as_str) == Some("super") {
                    up.pop();
                    rest = &rest[1..];
                }
                return Some(self.walk(Place::Module(up), rest, seen));
            }
            _ => {
                let child = child(module, first);
                if self.is_module(&child) {
                    Place::Module(child)
                } else if let Some((at, target)) = self.modules.get(module)?.binds.get(first) {
                    self.resolve(at, target, seen)?
                } else {
                    return None;
                }
            }
        };
        Some(self.walk(start, rest, seen))
    }

    /// Walks `rest` from `place`, through child modules and re-exports.
    fn walk(
        &self,
        mut place: Place,
        rest: &[String],
        seen: &mut BTreeSet<(ModPath, Vec<String>)>,
    ) -> Place {
        for segment in rest {
            let Place::Module(at) = &place else {
                // An associated item or a variant: still the item's module.
                return place;
            };
            match self.lookup(at, segment, seen) {
                Some(next) => place = next,
                // Not found (a macro's item, a name the index misses):
                // attribute it to the module reached.
                None => return Place::Item(at.clone()),
            }
        }
        place
    }

    /// What `name` means inside module `at`.
    fn lookup(
        &self,
        at: &ModPath,
        name: &str,
        seen: &mut BTreeSet<(ModPath, Vec<String>)>,
    ) -> Option<Place> {
        let child = child(at, name);
        if self.is_module(&child) {
            return Some(Place::Module(child));
        }
        let module = self.modules.get(at)?;
        if module.defines.contains(name) {
            return Some(Place::Item(at.clone()));
        }
        if let Some((from, target)) = module.binds.get(name) {
            return self.resolve(from, target, seen);
        }
        for glob in &module.globs {
            if let Some(Place::Module(source)) = self.resolve(at, glob, seen)
                && let Some(found) = self.lookup(&source, name, seen)
            {
                return Some(found);
            }
        }
        None
    }
}

fn child(module: &ModPath, name: &str) -> ModPath {
    let mut child = module.clone();
    child.push(name.to_owned());
    child
}

/// Collects modules, definitions, `use` bindings and crate paths.
struct Collector<'a> {
    krate: &'a mut Crate,
    file: &'a str,
    /// The module being visited (inline modules push onto it).
    stack: Vec<ModPath>,
    /// How deep in function bodies we are, per module: a `use` in a body
    /// is followed but does not bind a name of the module.
    depth: Vec<usize>,
}

impl Collector<'_> {
    fn here(&self) -> ModPath {
        self.stack.last().cloned().unwrap_or_default()
    }

    fn module(&mut self) -> &mut Module {
        let here = self.here();
        self.krate.modules.entry(here).or_default()
    }

    fn at_module_level(&self) -> bool {
        self.depth.last() == Some(&0)
    }

    fn define(&mut self, ident: &syn::Ident) {
        if self.at_module_level() {
            self.module().defines.insert(ident.to_string());
        }
    }

    fn record(&mut self, segments: Vec<String>) {
        if !segments.is_empty() {
            let here = self.here();
            self.krate
                .paths
                .push((here, self.file.to_owned(), segments));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.bind(prefix, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => self.bind(prefix, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => {
                self.record(prefix.clone());
                if self.at_module_level() {
                    let glob = prefix.clone();
                    self.module().globs.push(glob);
                }
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// `use prefix::ident as name`: `self` names the prefix itself.
    fn bind(&mut self, prefix: &[String], ident: &syn::Ident, name: &syn::Ident) {
        let mut target = prefix.to_vec();
        if ident != "self" {
            target.push(ident.to_string());
        }
        let name = if name == "self" {
            prefix.last().cloned().unwrap_or_default()
        } else {
            name.to_string()
        };
        self.record(target.clone());
        if self.at_module_level() && name != "_" {
            let here = self.here();
            self.module().binds.insert(name, (here, target));
        }
    }

    /// `crate :: a :: b` and `super :: …` runs in a macro's tokens.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.macro_tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.record(segments);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => return visit::visit_item(self, item),
        };
        if is_test(attrs) {
            return;
        }
        visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let module = child(&self.here(), &item.ident.to_string());
        self.krate.modules.entry(module.clone()).or_default();
        if let Some((_, items)) = &item.content {
            self.stack.push(module);
            self.depth.push(0);
            for item in items {
                self.visit_item(item);
            }
            self.depth.pop();
            self.stack.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.define(&item.sig.ident);
        self.in_body(|v| visit::visit_item_fn(v, item));
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.in_body(|v| visit::visit_impl_item_fn(v, item));
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        self.in_body(|v| visit::visit_trait_item_fn(v, item));
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.define(&item.ident);
        visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        self.define(&item.ident);
        visit::visit_item_enum(self, item);
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.define(&item.ident);
        visit::visit_item_trait(self, item);
    }

    fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
        self.define(&item.ident);
        visit::visit_item_type(self, item);
    }

    fn visit_item_const(&mut self, item: &'ast syn::ItemConst) {
        self.define(&item.ident);
        visit::visit_item_const(self, item);
    }

    fn visit_item_static(&mut self, item: &'ast syn::ItemStatic) {
        self.define(&item.ident);
        visit::visit_item_static(self, item);
    }

    fn visit_item_union(&mut self, item: &'ast syn::ItemUnion) {
        self.define(&item.ident);
        visit::visit_item_union(self, item);
    }

    /// `pub(crate)` and `pub(in crate::x)` restrict visibility; they name
    /// no dependency.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.record(segments);
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.macro_tokens(mac.tokens.clone());
        visit::visit_macro(self, mac);
    }
}

impl Collector<'_> {
    fn in_body(&mut self, f: impl FnOnce(&mut Self)) {
        if let Some(depth) = self.depth.last_mut() {
            *depth += 1;
        }
        f(self);
        if let Some(depth) = self.depth.last_mut() {
            *depth -= 1;
        }
    }
}

impl Graph {
    /// Every cycle, one per strongly connected group of nodes, each written
    /// `a → b → a` with the evidence of every edge.
    pub(crate) fn cycles(&self) -> Vec<String> {
        let nodes: BTreeSet<&String> = self
            .edges
            .iter()
            .flat_map(|(from, to)| std::iter::once(from).chain(to.keys()))
            .collect();
        let mut reported: BTreeSet<String> = BTreeSet::new();
        let mut cycles = Vec::new();
        for start in nodes {
            if reported.contains(start) {
                continue;
            }
            if let Some(cycle) = self.cycle_through(start) {
                reported.extend(cycle.iter().cloned());
                cycles.push(self.describe(&cycle));
            }
        }
        cycles
    }

    /// The shortest path from `start` back to itself, if any (breadth first).
    fn cycle_through(&self, start: &String) -> Option<Vec<String>> {
        let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
        let mut frontier = vec![start];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for node in frontier {
                for to in self.edges.get(node).into_iter().flat_map(BTreeMap::keys) {
                    if to == start {
                        let mut cycle = vec![node.clone()];
                        let mut at = node;
                        while at != start {
                            at = previous[at];
                            cycle.push(at.clone());
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    if !previous.contains_key(to) {
                        previous.insert(to, node);
                        next.push(to);
                    }
                }
            }
            frontier = next;
        }
        None
    }

    fn describe(&self, cycle: &[String]) -> String {
        let mut text = cycle.join(" → ");
        let _ = write!(text, " → {}", cycle[0]);
        for (i, from) in cycle.iter().enumerate() {
            let to = &cycle[(i + 1) % cycle.len()];
            let evidence = &self.edges[from][to];
            let _ = write!(
                text,
                "\n  {from} → {to}: {} names {}",
                evidence.file, evidence.path
            );
        }
        text
    }

    /// Whether `from` names something of `to`.
    pub(crate) fn depends(&self, from: &str, to: &str) -> bool {
        self.edges
            .get(from)
            .is_some_and(|to_map| to_map.contains_key(to))
    }
}
