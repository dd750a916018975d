"""The agent harness: messages, the tool allowlist, the loop, secrets, recordings, replay, clients."""
