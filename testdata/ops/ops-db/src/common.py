"""What both test charms share: a line per event in events.log, and
counters kept in StoredState mirrored to stored.json, both in the charm
directory (the unit's own), where a test can read them."""

import json
import os


def log_event():
    """Appends "hook [relation [remote unit]]" for this dispatch."""
    hook = os.environ.get("JUJU_DISPATCH_PATH", "").rsplit("/", 1)[-1]
    parts = [hook]
    for var in ("JUJU_RELATION_ID", "JUJU_REMOTE_UNIT"):
        if os.environ.get(var):
            parts.append(os.environ[var])
    with open("events.log", "a") as f:
        f.write(" ".join(parts) + "\n")


def count(stored, key):
    """Counts the event in StoredState and mirrors the counters."""
    stored.counts[key] = stored.counts.get(key, 0) + 1
    with open("stored.json", "w") as f:
        json.dump(dict(stored.counts), f, sort_keys=True)
