"""The lessons as Inspect AI tasks (the `inspect` extra: `pip install -e ".[inspect]"`).

`inspect eval replaylab/LESSON --model PROVIDER/MODEL [-T variant=NAME]` runs a lesson under
Inspect: every call goes through replaylab's allowlist and budget, and replaylab's judge scores
each sample. `replaylab import-inspect LOG... --out FOLDER` brings Inspect's logs back as
recordings. Only the modules of this package import inspect_ai, and only Inspect (through the
`inspect_ai` entry point) or `import-inspect` imports them; `convert` imports nothing of Inspect.
"""
