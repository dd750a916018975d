"""Names of the live client's settings, importable without importing the SDK."""

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_MODEL = "gpt-4o-mini"
