"""The mutation measurement's report (`make mutation`, after `mutmut run`): per module, how many
mutants the tests killed, and every mutant they did not, with its change.

The kill rate counts a mutant as killed when a test failed or timed out with it; "no tests" (no
test reaches the function) counts as not killed. Run from the project's root, in .venv-mutation.
"""

import sys
from collections import Counter, defaultdict

from mutmut.__main__ import SourceFileMutationData, get_diff_for_mutant, status_by_exit_code, walk_mutatable_files

KILLED = {"killed", "timeout"}


def main():
    by_module = defaultdict(Counter)
    survivors = []
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in sorted(data.exit_code_by_key.items()):
            status = status_by_exit_code[code]
            by_module[str(path)][status] += 1
            if status not in KILLED:
                survivors.append((name, status, path))
    if not by_module:
        sys.exit('no mutation results: run "mutmut run" first')
    total = Counter()
    print(f"{'module':<48} {'mutants':>8} {'killed':>8} {'rate':>7}")
    for module, counts in sorted(by_module.items()):
        mutants, killed = sum(counts.values()), sum(counts[s] for s in KILLED)
        total.update(counts)
        print(f"{module:<48} {mutants:>8} {killed:>8} {100 * killed / mutants:>6.1f}%")
    mutants, killed = sum(total.values()), sum(total[s] for s in KILLED)
    print(f"{'all':<48} {mutants:>8} {killed:>8} {100 * killed / mutants:>6.1f}%")
    print(f"outcomes: {dict(sorted(total.items()))}")
    print(f"\n{len(survivors)} mutants not killed:")
    for name, status, path in survivors:
        diff = [line for line in get_diff_for_mutant(name, path=path).splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        print(f"\n{name} ({status})")
        print("\n".join(f"    {line.strip()}" for line in diff))


if __name__ == "__main__":
    main()
