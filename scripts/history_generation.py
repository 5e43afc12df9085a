"""What ranking-shapes.py and ranking-habits.py share: Zipf weights, arrivals thinned by the hour of the day, and
the writing of one seeded file of donation JSON Lines per shape.

Imported from the scripts' own directory (Python puts a script's directory first on its path).
"""
import argparse
import os
import random
import sys

DAY = 86400.0
HOUR = 3600.0


def zipf_weights(n, s=1.0):
    """Popularity of n items by Zipf's law of exponent s, the first the most popular."""
    return [1.0 / (i + 1) ** s for i in range(n)]


def profiled_times(rng, start, days, per_day, profile, shift_h=0):
    """A Poisson process of `per_day` mean events a day from `start` for `days`, thinned by `profile` (24 chances of
    keeping an event, by local hour: the UTC hour plus `shift_h`); the rate is raised so that the mean is kept."""
    rate = per_day / DAY / (sum(profile) / 24.0)
    t, end, out = start, start + days * DAY, []
    while True:
        t += rng.expovariate(rate)
        if t >= end:
            return out
        if rng.random() < profile[(int((t % DAY) // HOUR) + shift_h) % 24]:
            out.append(t)


def main(shapes, default_seed, description):
    """Writes OUTDIR/SHAPE.jsonl for each shape asked for on the command line.

    `shapes` maps a shape's name to (its number, how many accounts, write), where write(name, rng) returns one
    account's rows as (date, account, sequence, JSON line). Every account has its own
    random.Random(seed * 1_000_003 + number * 1_000 + account), so a shape's file is a pure function of the seed and
    its parameters; the rows are sorted by (date, account, sequence), the order `suggest eval` replays them in.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("outdir")
    parser.add_argument("--seed", type=int, default=default_seed)
    parser.add_argument("--shapes", default=",".join(shapes))
    arguments = parser.parse_args()
    os.makedirs(arguments.outdir, exist_ok=True)
    for shape in arguments.shapes.split(","):
        number, accounts, write = shapes[shape]
        rows = []
        for index in range(accounts):
            rng = random.Random(arguments.seed * 1_000_003 + number * 1_000 + index)
            rows += write(f"{shape}-{index:02d}", rng)
        rows.sort(key=lambda row: (row[0], row[1], row[2]))
        with open(os.path.join(arguments.outdir, shape + ".jsonl"), "w") as out:
            for row in rows:
                out.write(row[3] + "\n")
        print(shape, len(rows), "donations,", sum('"outgoing"' in row[3] for row in rows), "sent", file=sys.stderr)
