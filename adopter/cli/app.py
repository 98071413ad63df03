"""The `adopter` command: parses arguments, calls the Python API, renders the result.

Data goes to stdout; progress bars and diagnostics go to stderr.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Iterable, List, Optional

import typer

from adopter.api import analysis
from adopter.api.options import DEFAULT_CACHE as CACHE_DIR, Limits, ModuleNames, Selection
from adopter.api.output import installed_version, render_matches, write_report
from adopter.api.query import DEFAULT_MEMORY, DEFAULT_TIMEOUT, QueryStopped, locate_nodes, read_facts, run_query
from adopter.api.rules import list_rules, load_rules, rule_source, rules_markdown
from adopter.api.scan import scan as run_scan
from adopter.api.structures import DEFAULT_MAX_GUARDS, SUMMARY_MAX_GUARDS, UnreadableFile, structures as find_structures
from adopter.records import AdopterError, Diagnostic, display_path

app = typer.Typer(add_completion=True, no_args_is_help=True,
                  help="Find where faster DL kernels apply in PyTorch model code, from source.")


def _print_version(asked: bool) -> None:
    if asked:
        version = installed_version()
        sys.stdout.write(f"adopter {version}\n" if version else "adopter (not installed: run from its source)\n")
        raise typer.Exit(0)


@app.callback()
def _main(show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                            help="Print Adopter's version and exit.")):
    """Find where faster DL kernels apply in PyTorch model code, from source."""


class ScanFormat(str, Enum):
    table = "table"
    jsonl = "jsonl"
    sarif = "sarif"
    html = "html"


class TableFormat(str, Enum):
    table = "table"
    tsv = "tsv"
    json = "json"


def _progress(label: str):
    """A progress wrapper for result streams: a bar on a terminal, silent otherwise."""
    def wrap(stream: Iterable, total: int):
        if not sys.stderr.isatty():
            yield from stream
            return
        # rich only for a terminal: importing it is a noticeable part of a short run's time
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total)
            for item in stream:
                bar.advance(task)
                yield item
    return wrap


# Each file's analysis runs in a child process that these stop (adopter/support/forks.py): a
# pathological file costs one diagnostic, not the run.
FILE_TIMEOUT = typer.Option(300.0, "--file-timeout", min=0, metavar="SECONDS",
                            help="Stop a file's analysis after this long (0: no limit).")
FILE_MEMORY = typer.Option(4096, "--file-memory", min=0, metavar="MB",
                           help="Stop a file's analysis when it needs more memory than this (0: no limit).")


def _limits(seconds: float, megabytes: int) -> Limits:
    return Limits(seconds or None, megabytes or None)


MODULE_ROOT = typer.Option([], "--module-root", metavar="DIR", file_okay=False,
                           help="Name each file under DIR by its path below it (`DIR/pkg/mod.py` is `pkg.mod`), "
                                "instead of by its package folders; relative imports resolve against the name. "
                                "May be repeated (the nearest root holding a file names it).")
MODULE_MAP = typer.Option(None, "--module-map", metavar="FILE.tsv", dir_okay=False,
                          help="Module names given per file: a TSV file with the header `file<TAB>module`, "
                               "files relative to its folder.")


QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary lines (diagnostics still).")
EXCLUDE = typer.Option([], "--exclude", metavar="PATTERN",
                       help="Leave out the files and folders under a folder argument that PATTERN matches "
                            "(.gitignore syntax, relative to the folder argument; may be repeated).")
NO_IGNORE = typer.Option(False, "--no-ignore", help="Also scan, under a folder argument, what is left out by "
                                                    "default: Python environments, VCS and tool caches, and "
                                                    "what .gitignore files there ignore.")


class _Settings:
    """A run's settings: the command line over the repository's configuration (adopter/api/config.py)."""

    def __init__(self, paths: List[str], rules: List[str], exclude: List[str], no_ignore: bool,
                 module_root: List[Path], module_map: Optional[Path], cache_dir):
        from adopter.api.config import find_config

        try:
            self.config = config = find_config(paths)
            self.rules = config.rules_selected(rules, cache_dir)
        except AdopterError as error:
            _fail(error)
        folder = str(config.folder) if config.folder is not None else "."
        self.selection = Selection(tuple(exclude), not no_ignore, ((folder, config.exclude),))
        self.modules = _modules(module_root or list(config.module_root), module_map)
        self.drop = ((lambda m: config.ignores(m.file, m.rule, m.rule_key)) if config.per_file_ignores else None)


def _modules(roots: List[Path], table: Optional[Path]) -> ModuleNames:
    """How files are named, from --module-root and --module-map (exit 2 on a bad map)."""
    try:
        return ModuleNames.read_map(table, tuple(roots)) if table is not None else ModuleNames(tuple(roots))
    except AdopterError as error:
        _fail(error)


def _report(diagnostic) -> None:
    """One diagnostic, one unwrapped line on stderr (`file:line:col: severity: reason`)."""
    sys.stderr.write(f"{diagnostic}\n")


def _fail(error: AdopterError) -> None:
    _report(error.diagnostic)
    raise typer.Exit(2)


def _fail_write(path: Path, error: OSError) -> None:
    """An output that cannot be written: one line, exit 2."""
    _fail(AdopterError(Diagnostic(str(error.filename or path), None, None, f"cannot write: {error.strerror or error}")))


@app.command()
def facts(paths: List[str] = typer.Argument(..., help="Python files or directories (searched recursively)."),
          out: Path = typer.Option(Path("build/facts"), "--out", help="Folder for the fact tables."),
          analyse: bool = typer.Option(True, "--analyse/--no-analyse", help="Also run the Datalog core."),
          rules: List[str] = typer.Option([], "--rules", "-r", help="Also run these rules (ids, packs or .adopt "
                                          "paths), caching their matches for a later scan."),
          jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Parallel workers (default: all cores)."),
          no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache ($ADOPTER_CACHE, else the per-user cache folder)."),
          module_root: List[Path] = MODULE_ROOT, module_map: Optional[Path] = MODULE_MAP,
          file_timeout: float = FILE_TIMEOUT, file_memory: int = FILE_MEMORY):
    """Extract fact tables (one TSV per relation) and run the Datalog core on every file."""
    cache_dir = None if no_cache else CACHE_DIR
    try:
        chosen = load_rules(rules, cache_dir=cache_dir) if rules else None
    except AdopterError as error:
        _fail(error)
    try:
        result = analysis.run(paths, analyse=analyse, rules=chosen, jobs=jobs, progress=_progress("facts"),
                              cache_dir=cache_dir, tables=out, limits=_limits(file_timeout, file_memory),
                              modules=_modules(module_root, module_map))
    except OSError as error:
        _fail_write(out, error)
    for diagnostic in result.diagnostics:
        _report(diagnostic)
    n_facts = result.fact_count
    summary = (f"{len(result.files)} files, {n_facts} facts -> {out}/, ")
    if analyse:
        nodes, structures, skipped = (result.total(i) for i in range(3))
        summary += f"{nodes} DL nodes, {structures} forward structures"
        summary += f" ({skipped} forward methods over {SUMMARY_MAX_GUARDS} guards not enumerated), " if skipped else ", "
    summary += f"{result.seconds:.1f} s, {result.failed} failed"
    print(summary)
    raise typer.Exit(1 if result.failed else 0)


@app.command()
def query(text: Optional[str] = typer.Argument(None, help='A Datalog rule body, e.g. \'qname(E, "torch.nn.Linear")\'.'),
          list_relations: bool = typer.Option(False, "--list-relations",
                                              help="List the relations a query may name: columns and meaning."),
          facts_dir: Optional[Path] = typer.Option(None, "--facts", help="Fact tables written by `adopter facts`."),
          sources: List[str] = typer.Option([], "--source", help="Or: Python files to extract facts from."),
          fmt: TableFormat = typer.Option(TableFormat.table, "--format"),
          timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", min=0, metavar="SECONDS",
                                        help="Stop a file's answers after this long (0: no limit)."),
          memory: int = typer.Option(DEFAULT_MEMORY, "--memory", min=0, metavar="MB",
                                     help="Stop a file's answers when they need more memory than this (0: no limit)."),
          allow_product: bool = typer.Option(False, "--allow-product",
                                             help="Answer a query whose literals share no variable between groups "
                                                  "(every combination of their answers)."),
          no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache "
                                        "(facts, and the derived relations a query names).")):
    """Answer a Datalog query over facts and every derived relation. The derived relations a
    query names are cached per file: a later query over kept relations runs no analysis."""
    cache_dir = None if no_cache else CACHE_DIR
    if list_relations:
        from adopter.api.query import relation_catalogue

        for name, columns, meaning in relation_catalogue():
            sys.stdout.write(f"{name}\t{columns}\t{meaning}\n")
        raise typer.Exit(0)
    if text is None:
        sys.stderr.write("query: error: give a query (a rule body), or --list-relations\n")
        raise typer.Exit(2)
    if facts_dir is None and not sources:
        sys.stderr.write("query: error: give --facts DIR (from `adopter facts`) or --source FILE\n")
        raise typer.Exit(2)
    failed = 0
    try:
        all_facts = read_facts(facts_dir) if facts_dir is not None else []
        if sources:
            result = analysis.run(sources, analyse=False, jobs=1, cache_dir=cache_dir)
            for diagnostic in result.diagnostics:
                _report(diagnostic)
            failed = result.failed
            all_facts += result.all_facts
        frame = locate_nodes(run_query(all_facts, text, timeout, memory, allow_product, cache_dir=cache_dir), all_facts)
    except QueryStopped as stopped:
        _report(stopped.diagnostic)
        raise typer.Exit(1)
    except AdopterError as error:
        _fail(error)
    if fmt is TableFormat.tsv:
        sys.stdout.write(frame.to_csv(sep="\t", index=False))
    elif fmt is TableFormat.json:
        sys.stdout.write(frame.to_json(orient="records", lines=True))
    else:
        print(frame.to_string(index=False) if len(frame) else "(no answers)")
    raise typer.Exit(1 if failed else 0)


@app.command()
def structures(file: Path = typer.Argument(..., help="A Python source file."),
               class_name: str = typer.Option(..., "--class", help="The model class."),
               function: str = typer.Option("forward", "--function", help="The method whose paths to show."),
               max_guards: int = typer.Option(DEFAULT_MAX_GUARDS, "--max-guards", help="Most guard conditions to enumerate."),
               show_guards: bool = typer.Option(False, "--guards", help="Print each path's guard assignment first."),
               file_timeout: float = FILE_TIMEOUT, file_memory: int = FILE_MEMORY):
    """Print every feasible model structure of a method, one per line."""
    try:
        found = find_structures(file, class_name, function, max_guards, _limits(file_timeout, file_memory))
    except UnreadableFile as problem:
        _report(problem.diagnostic)
        raise typer.Exit(1)
    except AdopterError as error:
        _fail(error)
    for structure in found:
        if show_guards:
            guards = ", ".join(("" if p == "pos" else "not ") + t for t, p in structure.guards) or "(no guards)"
            print(f"# {guards}")
        print(structure.render())


@app.command()
def scan(paths: List[str] = typer.Argument(..., help="Python files or directories (searched recursively)."),
         rules: List[str] = typer.Option([], "--rules", "-r", help="Rule ids, packs or .adopt paths (default: all bundled)."),
         fmt: ScanFormat = typer.Option(ScanFormat.table, "--format"),
         output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the report here (atomically)."),
         jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Parallel workers (default: all cores)."),
         no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache (a cold run)."),
         explain: bool = typer.Option(False, "--explain", help="Also report the near misses: where a rule's pattern "
                                      "is found but exactly one check fails, with that check and its evidence."),
         show_ignored: bool = typer.Option(False, "--show-ignored", help="List on stderr the matches that a "
                                           "`# adopter: ignore[rule]` on their line keeps out of the report."),
         warn_unused_ignores: bool = typer.Option(False, "--warn-unused-ignores",
                                                  help="Report each `# adopter: ignore` that keeps nothing out."),
         exclude: List[str] = EXCLUDE, no_ignore: bool = NO_IGNORE,
         fail_on_match: bool = typer.Option(False, "--fail-on-match", help="Exit 1 when there is a match "
                                            "(a CI gate: the matches a suppression keeps out do not count)."),
         exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even where a file failed "
                                        "(still 2 for bad arguments)."),
         quiet: bool = QUIET,
         module_root: List[Path] = MODULE_ROOT, module_map: Optional[Path] = MODULE_MAP,
         file_timeout: float = FILE_TIMEOUT, file_memory: int = FILE_MEMORY):
    """Find every place a rule matches; one record per location. A match whose first line holds
    `# adopter: ignore` (every rule) or `# adopter: ignore[rule-id, ...]` is left out. Settings
    also come from `[tool.adopter]` in a pyproject.toml (or an adopter.toml) at or above the
    first path; the command line wins."""
    cache_dir = None if no_cache else CACHE_DIR
    settings = _Settings(paths, rules, exclude, no_ignore, module_root, module_map, cache_dir)
    chosen = settings.rules
    html = fmt == ScanFormat.html  # (a page with each file's diff and near misses: what apply needs, and explain)
    result = run_scan(paths, chosen, jobs=jobs, progress=None if quiet else _progress("scan"), cache_dir=cache_dir,
                      limits=_limits(file_timeout, file_memory), explain=explain or html, layout=html,
                      modules=settings.modules, selection=settings.selection, drop=settings.drop)
    for diagnostic in result.diagnostics:
        _report(diagnostic)
    if show_ignored:
        for match in result.ignored:
            sys.stderr.write(f"{display_path(match.file)}:{match.line}: {match.rule}: ignored (# adopter: ignore)\n")
    if warn_unused_ignores:
        for name, line, ids in result.unused_ignores:
            what = f"[{ids}]" if ids else ""
            sys.stderr.write(f"{display_path(name)}:{line}: unused suppression: # adopter: ignore{what} keeps no match out\n")
    if html:
        from adopter.api.apply import patch_scanned
        from adopter.api.html_report import render_html

        kernels = settings.config.kernels or "default"
        patches = patch_scanned(result, chosen, jobs=jobs, cache_dir=cache_dir, kernels=kernels,
                                limits=_limits(file_timeout, file_memory), modules=settings.modules)
        text = render_html(patches, chosen, kernels, result.near_misses, version=installed_version() or "")
    else:
        text = render_matches(result.matches, fmt.value, chosen, result.diagnostics, result.near_misses)
    if output is not None:
        try:
            write_report(output, text)
        except OSError as error:
            _fail_write(output, error)
    else:
        sys.stdout.write(text)
    if (sys.stderr.isatty() or output is not None) and not quiet:
        misses = f", {len(result.near_misses)} near misses" if explain else ""
        ignored = f", {len(result.ignored)} ignored" if result.ignored else ""
        sys.stderr.write(f"{len(result.matches)} matches{misses}{ignored} in {len(result.files)} files, "
                         f"{result.seconds:.1f} s, {result.failed} failed\n")
    failed = result.failed or (fail_on_match and result.matches)
    raise typer.Exit(1 if failed and not exit_zero else 0)


@app.command()
def apply(paths: List[str] = typer.Argument(..., help="Python files or directories (searched recursively)."),
          rules: List[str] = typer.Option([], "--rules", "-r", help="Rule ids, packs or .adopt paths (default: all bundled)."),
          diff: bool = typer.Option(False, "--diff", help="Print a unified diff of every patched file."),
          check: bool = typer.Option(False, "--check", help="Exit 1 when a file would change (a CI or pre-commit "
                                     "check; with --diff, also show how); writes nothing by itself."),
          write: bool = typer.Option(False, "--write", help="Edit the files in place (atomically)."),
          out: Optional[Path] = typer.Option(None, "--out", help="Write patched copies under this folder."),
          patches: Optional[Path] = typer.Option(None, "--patches", help="Also write one .diff per patched file here."),
          backup: bool = typer.Option(False, "--backup/--no-backup", help="With --write, also keep FILE.orig (first run only); git is the usual backup."),
          copy_all: bool = typer.Option(False, "--copy-all", help="With --out, copy every file under the arguments "
                                        "too, so that the folder holds a complete tree."),
          jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="Parallel workers (default: all cores)."),
          no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache ($ADOPTER_CACHE, else the per-user cache folder)."),
          kernels: Optional[str] = typer.Option(None, "--kernels", "-k",
                                                help="Kernel set: `default` (PyTorch kernels measured to help), "
                                                     "`torch` (every PyTorch kernel) or `paper` (epoi/xFormers, "
                                                     "as the paper); else the configuration's, else `default`."),
          save_original_names: bool = typer.Option(False, "--save-original-names",
                                                   help="Where a kernel renames parameters, also save them under "
                                                        "their original names (checkpoints the unpatched model reads)."),
          exclude: List[str] = EXCLUDE, no_ignore: bool = NO_IGNORE, quiet: bool = QUIET,
          module_root: List[Path] = MODULE_ROOT, module_map: Optional[Path] = MODULE_MAP,
          file_timeout: float = FILE_TIMEOUT, file_memory: int = FILE_MEMORY):
    """Rewrite the matches to use the rules' kernels. Writes nothing unless asked."""
    from adopter.api.apply import plan_patches, write_patches
    from adopter.api.options import KERNEL_SETS, LEFT_OUT

    if not (diff or write or out or patches or check):
        _fail(AdopterError(Diagnostic("apply", None, None, "say what to do: --diff, --check, --write or --out DIR")))
    cache_dir = None if no_cache else CACHE_DIR
    settings = _Settings(paths, rules, exclude, no_ignore, module_root, module_map, cache_dir)
    kernels = kernels or settings.config.kernels or "default"
    if kernels not in KERNEL_SETS:
        _fail(AdopterError(Diagnostic("apply", None, None, f"unknown kernel set {kernels!r}: one of {', '.join(KERNEL_SETS)}")))
    report = plan_patches(paths, settings.rules, jobs=jobs, progress=None if quiet else _progress("patch"),
                          cache_dir=cache_dir,
                          kernels=kernels, save_original_names=save_original_names,
                          limits=_limits(file_timeout, file_memory), modules=settings.modules,
                          selection=settings.selection, drop=settings.drop)
    for diagnostic in report.diagnostics:
        _report(diagnostic)
    left_out: dict[tuple[str, str], int] = {}
    for match, reason in report.refused:
        if reason.startswith(LEFT_OUT):  # one line per rule below, not one per match
            left_out[(match.rule, reason)] = left_out.get((match.rule, reason), 0) + 1
        elif not quiet:
            sys.stderr.write(f"{display_path(match.file)}:{match.line}: {match.rule}: not rewritten: {reason}\n")
    for (rule, reason), count in sorted(left_out.items()) if not quiet else ():
        sys.stderr.write(f"{rule}: {count} matches not rewritten, {reason} (`--kernels torch` rewrites them)\n")
    written = write_patches(report, paths, write=write, out=out, patches=patches, backup=backup,
                            show_diff=sys.stdout.write if diff else None, copy_all=copy_all)
    for failure in written.failures:
        _report(failure)
    if written.interrupted:
        sys.stderr.write(f"interrupted: {len(written.files)} files written" + (":" if written.files else "") + "\n")
        for name in written.files:
            sys.stderr.write(f"  {display_path(name)}\n")
        raise typer.Exit(130)
    changed = sum(1 for p in report.patches if p.changed)
    if not quiet:
        sys.stderr.write(f"{report.applied} patches in {changed} files, {len(report.refused)} matches not rewritten, "
                         f"{report.failed + len(written.failures)} files failed\n")
    raise typer.Exit(1 if report.failed or written.failures or (check and changed) else 0)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(ctx: typer.Context,
        target: str = typer.Argument(..., help="A script to run, or with -m a module (as `python -m`); "
                                                "what follows it is its arguments."),
        module: bool = typer.Option(False, "-m", help="TARGET is a module's name."),
        patch: List[str] = typer.Option(..., "--patch", "-p", help="A module to rewrite as it is imported "
                                                                    "(dotted name; may be repeated)."),
        rules: List[str] = typer.Option([], "--rules", "-r", help="Rule ids, packs or .adopt paths (default: all bundled)."),
        kernels: str = typer.Option("default", "--kernels", "-k", help="Kernel set, as `apply`'s."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the result cache.")):
    """Run a script or module with the named modules rewritten in memory as they are imported,
    as `apply` would rewrite them; no file is edited. Prints what it rewrote on stderr."""
    from adopter.api.patching import patch as install, run_patched

    try:
        patching = install(*patch, rules=rules or None, kernels=kernels, cache_dir=None if no_cache else CACHE_DIR)
    except ValueError as error:
        _fail(AdopterError(Diagnostic("run", None, None, str(error))))
    except AdopterError as error:
        _fail(error)
    try:
        run_patched(target, list(ctx.args), patching, as_module=module)
    finally:
        patching.remove()
        for name, done in sorted(patching.patches.items()):
            sys.stderr.write(f"adopter: {name}: {len(done.applied)} patches, {len(done.refused)} matches not rewritten\n")
        for diagnostic in patching.diagnostics:
            _report(diagnostic)
        for name in sorted(set(patch) - set(patching.patches)):
            sys.stderr.write(f"adopter: {name}: not imported, or nothing to rewrite in it\n")


@app.command("test")
def test_rules(paths: List[str] = typer.Argument(..., help="Rule files (.adopt) or folders of them.")):
    """Check each rule's fixture (`<id>.py` beside `<id>.adopt`) against its `# match: <id>`,
    `# no-match: <id>` and `# todo-match: <id>` annotations, as `semgrep --test` does (docs/dsl.md)."""
    from adopter.api.fixtures import check_rules

    try:
        results = check_rules(paths)
    except AdopterError as error:
        _fail(error)
    for result in results:
        for failure in result.failures:
            _report(failure)
    failed = [r for r in results if not r.passed]
    sys.stderr.write(f"{len(results)} rules, {sum(r.checked for r in results)} annotations: "
                     f"{len(results) - len(failed)} passed, {len(failed)} failed\n")
    raise typer.Exit(1 if failed else 0)


@app.command()
def lsp():
    """Serve the Language Server Protocol over stdio, for an editor: diagnostics for the matches
    and near misses of each open file as you edit, the rule's header on hover, and a quick fix
    that rewrites a match (needs `pip install 'adopter[lsp]'`)."""
    try:
        from adopter.lsp.server import main as serve
    except ImportError as error:
        _fail(AdopterError(Diagnostic("adopter lsp", None, None, f"the language server needs pygls ({error.name} is not "
                                      "installed): pip install 'adopter[lsp]'")))
    serve()


rules_app = typer.Typer(help="List and show rules.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")


@rules_app.command("list")
def rules_list(markdown: bool = typer.Option(False, "--markdown", help="One row per rule, as a Markdown table.")):
    """The bundled rules: id (`<id>.<shape>` for another code shape of a rule), pack (`--rules PACK`
    selects one) and what each finds."""
    if markdown:
        sys.stdout.write(rules_markdown())
        return
    for rule in list_rules():
        print(f"{rule.key}\t{rule.pack}\t{rule.summary}")


@rules_app.command("show")
def rules_show(rule_id: str = typer.Argument(..., help="A rule id or .adopt path."),
               datalog: bool = typer.Option(False, "--datalog", help="Print the generated Datalog.")):
    """Print a rule's source, or the Datalog it compiles to (each of its files, for a rule of several shapes)."""
    try:
        text = rule_source(rule_id, datalog)
    except AdopterError as error:
        _fail(error)
    print(text, end="")


def _terminate(signum, _frame) -> None:
    """SIGTERM as an interruption: `finally` blocks run (workers are stopped, temporary
    files removed) and the command says what it was doing."""
    raise KeyboardInterrupt


def main() -> None:
    import gc
    import signal

    signal.signal(signal.SIGTERM, _terminate)  # typer exits 130 on an interruption
    # the command owns this process: what its imports made lives as long as it does, so the
    # collector need not walk it again (nor touch, in each forked worker, the pages holding it)
    gc.freeze()
    app()


if __name__ == "__main__":
    main()
