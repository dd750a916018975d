# The entry users run from the project's root: `snakemake --cores 1` builds every result,
# `snakemake --cores 1 LESSON` one lesson. The workflow itself is workflow/Snakefile (the layout of
# the Snakemake workflow catalog); a user's Snakefile uses it as a module (docs/workflow.md).


include: "workflow/Snakefile"


# Snakemake keeps the default target of the Snakefile it runs, never one an included file declares:
# that of workflow/Snakefile (`rule all`), declared again here.
workflow.default_target = "all"
