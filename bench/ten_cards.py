#!/usr/bin/env python3
"""The uncached decision scenario of issue 47: ten card sheets on one screen, three of them with
counts for every user.

  ten_cards.py catalog SRC OUT     SRC's sheets plus seven card sheets on home/accounts (ten in all)
  ten_cards.py states DB USERS     replaces DB's user_states: user u<n> has counts in three of the
                                   ten containers (which three and how many cards vary with n)

Rows are written in the store's own format (format 1, migrations/0002_user_state_rows.sql), records
sorted as UserStateCodec sorts them, so the server reads them as if it had written them.
"""
import json
import sqlite3
import sys

EXTRA = [
    # id, container, priority, extras: the shapes the example catalog already uses on home
    ("home-cards-1", "cards-home-1", 90, {"size": "content", "style": "flexible", "cornerRadius": 16}),
    ("home-cards-2", "cards-home-2", 80, {"frequency": {"max": 5, "periodSeconds": 86400}}),
    ("home-cards-3", "cards-home-3", 70, {"style": "strict", "title": "Pending approvals"}),
    ("home-cards-4", "cards-home-4", 60, {"cooldownSeconds": 60}),
    ("home-cards-5", "cards-home-5", 50, {"size": "content", "style": "flexible"}),
    ("home-cards-6", "cards-home-6", 40, {"frequency": {"max": 3, "periodSeconds": 3600}}),
    ("home-cards-7", "cards-home-7", 30, {}),
]
# The ten containers on home/accounts: the example catalog's three, then the seven above.
CONTAINERS = [("alerts-home", "category:security"), ("offers-home", ""), ("reminders-home", "")] + \
             [(c, "") for _, c, _, _ in EXTRA]


def catalog(src, out):
    data = json.load(open(src))
    for sheet_id, container, priority, extras in EXTRA:
        sheet = {"id": sheet_id, "kind": "cards", "screen": "home", "tab": "accounts",
                 "containerId": container, "priority": priority}
        sheet.update(extras)
        data["sheets"].append(sheet)
    home = [s for s in data["sheets"] if s["kind"] == "cards" and s.get("screen") == "home"]
    assert len(home) == 10, len(home)
    json.dump(data, open(out, "w"), indent=1)


def field(text):
    raw = str(text).encode()
    return str(len(raw)).encode() + b":" + raw


def state(n):
    picked = sorted({n % 10, (n + 3) % 10, (n + 7) % 10})
    keys = sorted((CONTAINERS[i] for i in picked), key=lambda k: (k[0].encode(), k[1].encode()))
    out = b"1"
    for j, (container, filt) in enumerate(keys):
        out += b"c" + field(container) + field(filt) + field(1 + (n + j) % 6) + b"~"
    return out


def states(db, users):
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM user_states")
        con.executemany("INSERT INTO user_states (user_id, state) VALUES (?, ?)",
                        (("u%07d" % n, state(n)) for n in range(1, users + 1)))
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "catalog":
        catalog(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "states":
        states(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
