"""Guards on the package's structure (issue 17): one-way layering in Python and in Rust.

* The largest circle of Python modules in ``python/cranax/`` — counting function-level imports too — has at
  most 3 files. An import of a package ``__init__`` that only re-exports (a face) is not an edge: importing a
  face costs nothing structural, and every submodule import passes through its package anyway.
* Function-level imports of cranax modules outside the tour and bench code are at most 25, and each says why
  in a comment on its line or the line above.
* No ``crate::runtime`` path is named in ``rust/backend`` outside test code.

Run ``python tests/test_architecture.py`` to print the circles and the function-level imports.
"""
import ast
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PKG_DIR = os.path.join(ROOT, "python", "cranax")
MAX_CIRCLE = 3
MAX_FUNCTION_LEVEL = 25
_EXEMPT = ("cranax.tour", "cranax.bench")  # the main job and the benchmark tool may import lazily


def _modules():
    mods = {}
    for dirpath, _, files in os.walk(PKG_DIR):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                name = os.path.relpath(path, os.path.dirname(PKG_DIR))[:-3].replace(os.sep, ".")
                if name.endswith(".__init__"):
                    name = name[: -len(".__init__")]
                mods[name] = path
    return mods


def _is_face(tree):
    """A package ``__init__`` whose body is only imports, ``__all__``, a docstring and name aliases."""
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = node.value
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets) and (
                    any(t.id == "__all__" for t in targets) or isinstance(value, (ast.Name, ast.Attribute))):
                continue
        if isinstance(node, ast.Delete):
            continue
        return False
    return True


def _resolve(current, is_pkg, level, module):
    if level == 0:
        return module
    base = current.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph():
    """(edges, function_level): edges between cranax modules, and the function-level imports as
    (module, line, has_reason)."""
    mods = _modules()
    trees, faces = {}, set()
    for name, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
        trees[name] = (ast.parse(src), src.splitlines())
        if path.endswith("__init__.py") and _is_face(trees[name][0]):
            faces.add(name)

    def owner(target):
        while target and target not in mods and "." in target:
            target = target.rsplit(".", 1)[0]
        return target if target in mods else None

    edges, function_level = defaultdict(set), []
    for name, (tree, lines) in trees.items():
        is_pkg = mods[name].endswith("__init__.py")
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_pkg, node.level, node.module)
                targets = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
            else:
                continue
            targets = [t for t in (owner(t) for t in targets if t and t.split(".")[0] == "cranax") if t]
            if not targets:
                continue
            q, in_function = node, False
            while q in parents:
                q = parents[q]
                if isinstance(q, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    in_function = True
                    break
            for t in targets:
                if t != name and t not in faces:
                    edges[name].add(t)
            if in_function and not name.startswith(_EXEMPT):
                here = lines[node.lineno - 1]
                above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
                has_reason = "#" in here or above.startswith("#")
                function_level.append((name, node.lineno, has_reason))
    return mods, edges, function_level


def circles(mods, edges):
    """Strongly connected components, largest first (Tarjan's algorithm, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in mods:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return sorted(out, key=len, reverse=True)


def rust_runtime_uses():
    """``crate::runtime`` in rust/backend outside ``#[cfg(test)]`` modules and ``tests.rs`` files."""
    hits = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "rust", "backend")):
        for f in files:
            if not f.endswith(".rs") or f == "tests.rs":
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            depth_at_test = None
            depth = 0
            pending_cfg_test = False
            for i, line in enumerate(lines, 1):
                code = line.split("//")[0]
                if re.search(r"#\[cfg\(test\)\]", code):
                    pending_cfg_test = True
                if pending_cfg_test and "{" in code and depth_at_test is None:
                    depth_at_test = depth
                    pending_cfg_test = False
                if depth_at_test is None and "crate::runtime" in code:
                    hits.append(f"{os.path.relpath(path, ROOT)}:{i}")
                depth += code.count("{") - code.count("}")
                if depth_at_test is not None and depth <= depth_at_test:
                    depth_at_test = None
    return hits


def test_largest_python_import_circle_is_small():
    mods, edges, _ = import_graph()
    largest = circles(mods, edges)[0]
    assert len(largest) <= MAX_CIRCLE, f"import circle of {len(largest)} modules: {largest}"


def test_function_level_imports_are_few_and_explained():
    _, _, function_level = import_graph()
    assert len(function_level) <= MAX_FUNCTION_LEVEL, \
        f"{len(function_level)} function-level imports: {[(m, n) for m, n, _ in function_level]}"
    unexplained = [(m, n) for m, n, why in function_level if not why]
    assert not unexplained, f"function-level imports without a one-line reason: {unexplained}"


def test_rust_backends_do_not_import_the_runtime():
    hits = rust_runtime_uses()
    assert not hits, f"crate::runtime named in rust/backend: {hits}"


if __name__ == "__main__":
    mods, edges, function_level = import_graph()
    for comp in circles(mods, edges)[:3]:
        print(len(comp), comp)
    print(f"function-level imports (outside tour/bench): {len(function_level)}")
    if "-v" in sys.argv:
        for m, n, why in function_level:
            print(f"  {m}:{n}{'' if why else '   (no reason given)'}")
    hits = rust_runtime_uses()
    print(f"crate::runtime in rust/backend: {len(hits)}")
    for h in hits if "-v" in sys.argv else []:
        print("  ", h)
