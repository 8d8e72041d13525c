#!/usr/bin/env python3
"""A SAMBA data owner backed by an SQLite table of ratings.

It speaks bandit-node's exec protocol, version 1 (docs/environments.md): the
daemon starts it once per session, writes a hello line and then one pull
request per step; it answers each pull by sampling one rating of its item
from the table, uniformly and with replacement, and thresholding it as
protocol/samba's Ratings arm does: reward 1 if the rating is at least the
threshold (default 4), 0 otherwise. SAMBA's rewards are 0 or 1.

The table is ratings(item INTEGER, rating REAL). Fill it once, before any
daemon starts the program, from one of:

  --init-means CSV   a CSV of item_id,mu (examples/environments/
                     movielens_item_order.csv: the MovieLens-100k arm means
                     of the SAMBA paper's prototype, mu = users who rated
                     the movie 4 or more / all 943 users). The per-user
                     ratings are not in the repository, so each item gets
                     943 rows, one per user: round(mu * 943) ratings of 4
                     and the rest 0 ("rated below 4, or not at all"). A
                     pull then is a Bernoulli(mu) draw, up to rounding.
  --init-movielens u.data   the real MovieLens-100k ratings file (user, item,
                     rating, timestamp; tab-separated): its 100,000 ratings
                     of 1 to 5. Then an item's mean is its ratings of 4 or
                     more over the ratings it received, not over all users.

With --init-only the program fills the table and exits; otherwise it serves.
An organization would point --db at a copy of its own table instead.

Which item: --item ID, or else the data owner's index within its role (the
hello's "index", its arm in the session) picks the index-th best item of the
table (by the share of ratings at or above the threshold, ties by item id),
so data owner 0 holds the best movie, as testnet/samba.sh's top-K arms.

Randomness: --seed S seeds the draws (with the index: S + index), for a
reproducible run; without it, each start draws a fresh seed from the OS.

Usage:
  samba_owner_sqlite.py --db ratings.db --init-means movielens_item_order.csv --init-only
  samba_owner_sqlite.py --db ratings.db [--item ID] [--threshold 4] [--seed S]

Only the standard library: python3 (Debian: apt-get install -y python3).
"""

import argparse
import csv
import json
import random
import sqlite3
import sys

HELLO = "bandit-node/environment"
VERSION = 1
USERS = 943  # MovieLens-100k's users: the prototype's denominator


def log(msg):
    """A line on stderr, for the operator: the daemon quotes the last ones."""
    print("samba_owner_sqlite: " + msg, file=sys.stderr, flush=True)


def send(obj):
    """One answer line on stdout, flushed."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def create(db):
    db.execute("CREATE TABLE IF NOT EXISTS ratings (item INTEGER NOT NULL, rating REAL NOT NULL)")
    db.execute("CREATE INDEX IF NOT EXISTS ratings_item ON ratings (item)")


def init_means(db, path):
    rows = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            item, mu = int(rec["item_id"]), float(rec["mu"])
            good = round(mu * USERS)
            rows += [(item, 4.0)] * good + [(item, 0.0)] * (USERS - good)
    db.executemany("INSERT INTO ratings (item, rating) VALUES (?, ?)", rows)
    return len(rows)


def init_movielens(db, path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) < 3:
                raise ValueError(f"{path}:{n}: want user, item, rating, timestamp")
            rows.append((int(fields[1]), float(fields[2])))
    db.executemany("INSERT INTO ratings (item, rating) VALUES (?, ?)", rows)
    return len(rows)


def pick_item(db, index, threshold):
    row = db.execute(
        "SELECT item FROM ratings GROUP BY item ORDER BY AVG(rating >= ?) DESC, item LIMIT 1 OFFSET ?",
        (threshold, index)).fetchone()
    if row is None:
        raise LookupError(f"the table has fewer than {index + 1} items; data owner {index} has none")
    return row[0]


def serve(db, args):
    hello = sys.stdin.readline()
    if not hello:
        return 0
    try:
        h = json.loads(hello)
    except ValueError:
        log(f"the first line is not the daemon's hello: {hello.strip()[:80]!r}")
        return 1
    if h.get("hello") != HELLO or h.get("version") != VERSION:
        send({"error": f"this program speaks version {VERSION} of {HELLO}, not {hello.strip()[:80]}"})
        return 1
    index = int(h.get("index", 0))
    try:
        item = args.item if args.item is not None else pick_item(db, index, args.threshold)
        n, good = db.execute("SELECT COUNT(*), COALESCE(SUM(rating >= ?), 0) FROM ratings WHERE item = ?",
                             (args.threshold, item)).fetchone()
        if n == 0:
            raise LookupError(f"item {item} has no ratings in {args.db}")
    except (LookupError, sqlite3.Error) as e:
        log(str(e))
        send({"error": str(e)})
        return 1
    rng = random.Random(None if args.seed is None else args.seed + index)
    log(f"session {h.get('session', '?')}: data owner {index} answers from item {item} "
        f"({n} ratings, {100 * good / n:.1f} % at or above {args.threshold:g})")
    send({"hello": HELLO, "version": VERSION})
    for line in sys.stdin:
        try:
            q = json.loads(line)
            qid = q["id"]
        except (ValueError, KeyError, TypeError):
            log(f"a request that is not JSON with an id: {line.strip()[:80]!r}")
            return 1
        if q.get("kind") != "pull" or len(q.get("arms", [])) != 1:
            send({"id": qid, "error": f"a data owner answers pulls of its one arm, not {line.strip()[:80]}"})
            continue
        rating, = db.execute("SELECT rating FROM ratings WHERE item = ? ORDER BY rowid LIMIT 1 OFFSET ?",
                             (item, rng.randrange(n))).fetchone()
        send({"id": qid, "reward": 1 if rating >= args.threshold else 0})
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, help="the SQLite database file")
    init = p.add_mutually_exclusive_group()
    init.add_argument("--init-means", metavar="CSV", help="fill the table from item_id,mu means")
    init.add_argument("--init-movielens", metavar="U_DATA", help="fill the table from MovieLens-100k's u.data")
    p.add_argument("--init-only", action="store_true", help="fill the table and exit")
    p.add_argument("--item", type=int, help="the item this data owner holds (default: by its index)")
    p.add_argument("--threshold", type=float, default=4, help="a rating at or above it is a reward of 1 (default 4)")
    p.add_argument("--seed", type=int, help="seed the draws (with the data owner's index)")
    args = p.parse_args()
    try:
        db = sqlite3.connect(args.db)
        create(db)
        if args.init_means or args.init_movielens:
            db.execute("DELETE FROM ratings")
            n = init_means(db, args.init_means) if args.init_means else init_movielens(db, args.init_movielens)
            db.commit()
            log(f"{args.db}: {n} ratings")
    except (OSError, ValueError, KeyError, sqlite3.Error) as e:
        log(f"{args.db}: {e}")
        return 1
    if args.init_only:
        return 0
    return serve(db, args)


if __name__ == "__main__":
    sys.exit(main())
