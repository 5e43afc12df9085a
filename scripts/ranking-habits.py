#!/usr/bin/env python3
"""Seeded generator of donation JSON Lines for 8 messaging habits not covered by ranking-shapes.py: a second set of
histories, written after the fresh and stale weights were chosen on the first, to check that they generalize
(docs/ranking-quality.md, "Eight more habits").

    python3 scripts/ranking-habits.py OUTDIR [--seed 2024] [--shapes s_support,...]
    for f in OUTDIR/*.jsonl; do suggest eval "$f" --policy all --json; done

Each account uses random.Random(seed * 1_000_003 + shape_no * 1_000 + account_no). Dates UTC from 2024-03-04.
Lines sorted by (date, account, seq) so eval replays in time order.

  s_support   support agent: a stream of new customers, each ticket 1-4 exchanges over hours/days; few colleagues
  s_family    family group + 1:1 chats with each member; group talk often spills into a 1:1 with one member
  s_lurker    work chat: busy channels (others post), the person replies in threads (own conv ids) and DMs
  s_penpal    slow correspondences: ~1 letter a week per pen pal, answered 1-6 days later
  s_forward   forwards the same photo/link to 3-7 people in a row, minutes apart, plus ordinary chats
  s_night     night-shift worker: waking hours shifted ~10 h, night colleagues vs daytime family
  s_dormant   active 6-10 weeks, dormant 4-7 months (only stray incoming), active again, contacts half changed
  s_heavy     very heavy account: ~2,500 donations a day over 60 people/groups, 30 days
"""
import datetime as dt
import json
import math

from history_generation import DAY, HOUR, main, profiled_times, zipf_weights

T0 = int(dt.datetime(2024, 3, 4, tzinfo=dt.timezone.utc).timestamp())
# awake profile by local hour
AWAKE = [0.03, 0.01, 0.01, 0.01, 0.01, 0.02, 0.1, 0.45, 0.7, 0.8, 0.8, 0.85,
         0.9, 0.85, 0.8, 0.8, 0.85, 0.9, 1.0, 1.0, 1.0, 0.9, 0.6, 0.2]


def poisson_times(rng, start, days, per_day, profile=AWAKE, shift_h=0):
    """Arrivals of `per_day` a day on average, by a local-hour profile (local hour = UTC hour + shift_h)."""
    return profiled_times(rng, start, days, per_day, profile, shift_h)


class Acc:
    def __init__(self, name, rng):
        self.name, self.rng, self.ev, self.convs = name, rng, [], {}

    def person(self, pid):
        cid = "dm-" + pid
        self.convs.setdefault(cid, dict(members=[pid], group=None, gid=None))
        return cid

    def group(self, key, members, label, gid=None):
        cid = "grp-" + key
        self.convs.setdefault(cid, dict(members=list(members), group=label, gid=gid or cid))
        return cid

    def add(self, t, cid, direction, sender=None, ctype=None):
        self.ev.append((t, cid, direction, sender, ctype))

    def chat(self, t, cid, me_first=0.5, mean_len=3.0, alt=0.75, gap=50.0):
        r = self.rng
        n = 1 + int(r.expovariate(1.0 / max(mean_len - 1, 0.01)))
        side = "outgoing" if r.random() < me_first else "incoming"
        for _ in range(n):
            self.add(t, cid, side)
            if r.random() < alt:
                side = "incoming" if side == "outgoing" else "outgoing"
            t += r.lognormvariate(math.log(gap), 1.0)
        return t

    def lines(self):
        out = []
        for seq, (t, cid, d, sender, ctype) in enumerate(sorted(self.ev, key=lambda e: e[0])):
            c = self.convs[cid]
            ppl = [{"customIdentifier": m, "displayName": m.replace("-", " ").replace("_", " ").title(),
                    "personHandle": {"value": m + "@example.org", "type": "emailAddress"}} for m in c["members"]]
            me = {"customIdentifier": "me", "displayName": "Me", "isMe": True}
            it = {"conversationIdentifier": cid, "serviceName": "chat.example"}
            if c["group"]:
                it["speakableGroupName"] = c["group"]
            if d == "outgoing":
                it["sender"], it["recipients"] = me, ppl
            else:
                i = (sender if sender is not None else self.rng.randrange(len(ppl))) % len(ppl)
                it["sender"] = ppl[i]
                it["recipients"] = [me] + [p for j, p in enumerate(ppl) if j != i] if c["group"] else [me]
            if ctype:
                it["contentTypes"] = [ctype]
            ts = int(round(t))
            o = {"account": self.name, "identifier": f"{self.name}-{seq}",
                 "date": dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "direction": d, "intent": it}
            if c["gid"]:
                o["groupIdentifier"] = c["gid"]
            out.append((ts, self.name, seq, json.dumps(o, separators=(",", ":"))))
        return out


# ------------------------------------------------------------------ shapes

def g_support(a, p):
    r = a.rng
    cols = [a.person(f"colleague{i}") for i in range(4)]
    team = a.group("support-team", [f"colleague{i}" for i in range(4)], "Support team")
    n = 0
    for t in poisson_times(r, T0, p["days"], p["tickets_per_day"], shift_h=1):
        if dt.datetime.fromtimestamp(t, dt.timezone.utc).weekday() >= 5:
            continue
        cust = a.person(f"cust{n}"); n += 1
        # customer writes first (usually), agent answers within minutes to an hour
        u = t
        a.add(u, cust, "incoming")
        for k in range(r.choice([1, 1, 2, 2, 3, 4])):
            u += r.expovariate(1 / 1500.0)
            a.add(u, cust, "outgoing")
            if r.random() < 0.6:
                u += r.choice([r.expovariate(1 / 1800.0), r.uniform(0.5, 2.5) * DAY])
                a.add(u, cust, "incoming")
            else:
                break
    for t in poisson_times(r, T0, p["days"], p["internal_per_day"], shift_h=1):
        cid = team if r.random() < 0.5 else r.choice(cols)
        a.chat(t, cid, 0.5, 3.0)


def g_family(a, p):
    r = a.rng
    fam = ["mum", "dad", "sister", "brother", "grandma"][: p["members"]]
    grp = a.group("family", fam, "Family")
    dms = [a.person(m) for m in fam]
    friends = [a.person(f"friend{i}") for i in range(8)]
    fw = zipf_weights(8, 1.0)
    for t in poisson_times(r, T0, p["days"], p["family_group_per_day"]):
        # relatives chat in the group; I sometimes join; then often DM one member about it
        u = t
        for _ in range(1 + int(r.expovariate(1 / 3.0))):
            a.add(u, grp, "incoming", r.randrange(len(fam)))
            u += r.lognormvariate(math.log(90), 1.0)
        if r.random() < 0.55:
            u = a.chat(u, grp, 1.0, 2.0, 0.6)
        if r.random() < 0.35:
            u += r.uniform(60, 1800)
            m = r.randrange(len(fam))
            a.chat(u, dms[m], 0.6, 3.0)
    for t in poisson_times(r, T0, p["days"], p["dm_family_per_day"]):
        a.chat(t, r.choice(dms[:3] if r.random() < 0.7 else dms), 0.5, 3.0)
    for t in poisson_times(r, T0, p["days"], p["friends_per_day"]):
        a.chat(t, r.choices(friends, fw)[0], 0.5, 4.0)


def g_lurker(a, p):
    r = a.rng
    ppl = [f"cw{i}" for i in range(30)]
    chans = [a.group(f"ch{i}", r.sample(ppl, r.randint(8, 25)), f"#chan-{i}") for i in range(p["channels"])]
    cw = zipf_weights(len(chans), 0.8)
    dms = [a.person(x) for x in ppl[:10]]
    dw = zipf_weights(10, 1.1)
    nthreads = 0
    for t in poisson_times(r, T0, p["days"], p["posts_per_day"], shift_h=-1):
        if dt.datetime.fromtimestamp(t, dt.timezone.utc).weekday() >= 5 and r.random() < 0.9:
            continue
        ch = r.choices(chans, cw)[0]
        a.add(t, ch, "incoming")
        if r.random() < p["thread_p"]:  # a thread on that post: its own conversation, same groupIdentifier
            nthreads += 1
            key = f"{ch[4:]}-t{nthreads}"
            th = a.group(key, a.convs[ch]["members"], a.convs[ch]["group"] + " thread", gid=ch)
            u = t
            for _ in range(1 + int(r.expovariate(1 / 3.0))):
                u += r.lognormvariate(math.log(300), 1.0)
                a.add(u, th, "incoming")
            if r.random() < p["reply_thread_p"]:
                u += r.lognormvariate(math.log(900), 1.2)
                a.add(u, th, "outgoing")
                if r.random() < 0.5:
                    u += r.lognormvariate(math.log(200), 1.0)
                    a.add(u, th, "incoming")
                    if r.random() < 0.5:
                        a.add(u + r.lognormvariate(math.log(120), 1.0), th, "outgoing")
    for t in poisson_times(r, T0, p["days"], p["channel_posts_per_day"], shift_h=-1):
        a.add(t, r.choices(chans, cw)[0], "outgoing")
    for t in poisson_times(r, T0, p["days"], p["dm_per_day"], shift_h=-1):
        a.chat(t, r.choices(dms, dw)[0], 0.5, 3.0)


def g_penpal(a, p):
    r = a.rng
    pals = [a.person(f"pal{i}") for i in range(p["pals"])]
    for i, pal in enumerate(pals):
        t = T0 + r.uniform(0, 10) * DAY
        side = "outgoing" if r.random() < 0.5 else "incoming"
        start = t
        while t < T0 + p["days"] * DAY:
            a.add(t, pal, side)
            if r.random() < 0.15:  # a P.S. a few minutes later
                a.add(t + r.uniform(60, 900), pal, side)
            side = "incoming" if side == "outgoing" else "outgoing"
            t += r.uniform(1, 6) * DAY + r.uniform(-3, 3) * HOUR
    others = [a.person(f"acq{i}") for i in range(10)]
    for t in poisson_times(r, T0, p["days"], p["other_per_day"]):
        a.chat(t, r.choice(others), 0.5, 2.0)


def g_forward(a, p):
    r = a.rng
    ppl = [f"c{i}" for i in range(25)]
    cs = [a.person(x) for x in ppl]
    w = zipf_weights(25, 1.0)
    grps = [a.group(f"g{i}", r.sample(ppl, 5), f"Friends {i}") for i in range(3)]
    for t in poisson_times(r, T0, p["days"], p["chats_per_day"]):
        cid = r.choice(grps) if r.random() < 0.15 else r.choices(cs, w)[0]
        a.chat(t, cid, 0.5, 3.0)
    for t in poisson_times(r, T0, p["days"], p["forwards_per_day"]):
        ct = r.choice(["public.jpeg", "public.jpeg", "public.url", "public.movie"])
        k = r.randint(3, 7)
        targets = []
        while len(targets) < k:
            c = r.choices(cs + grps, w + [0.3] * 3)[0]
            if c not in targets:
                targets.append(c)
        u = t
        for c in targets:
            a.add(u, c, "outgoing", ctype=ct)
            if r.random() < 0.5:
                a.add(u + r.lognormvariate(math.log(600), 1.2), c, "incoming")
            u += r.lognormvariate(math.log(25), 0.7)


def g_night(a, p):
    r = a.rng
    sh = p["shift_h"]  # local = UTC + sh; awake profile shifted ~10 h later than usual
    prof = AWAKE[-10:] + AWAKE[:-10]  # peak activity in the local night
    crew = [a.person(f"crew{i}") for i in range(5)]
    crewg = a.group("night-crew", [f"crew{i}" for i in range(5)], "Night crew")
    home = [a.person("partner"), a.person("kid"), a.person("mum")]
    friends = [a.person(f"friend{i}") for i in range(6)]
    for t in poisson_times(r, T0, p["days"], p["sessions_per_day"], profile=prof, shift_h=sh):
        h = (int((t % DAY) // HOUR) + sh) % 24
        if 22 <= h or h < 7:   # on shift
            lst, wts = crew + [crewg], [3, 2, 1, 1, 1, 4]
        elif 7 <= h < 12:      # going home / handover
            lst, wts = home + [crewg], [4, 1, 1, 2]
        else:                  # afternoon: family & friends
            lst, wts = home + friends, [3, 3, 2, 2, 1, 1, 1, 1, 1]
        a.chat(t, r.choices(lst, wts)[0], 0.55, 3.0)
    # daytime world still writes in daytime (while they sleep): incoming that waits
    for t in poisson_times(r, T0, p["days"], p["day_in_per_day"], shift_h=sh):
        a.add(t, r.choice(friends + home), "incoming")


def g_dormant(a, p):
    r = a.rng
    old = [f"o{i}" for i in range(12)]
    new = [f"n{i}" for i in range(12)]
    w = zipf_weights(12, 1.0)
    act1 = r.uniform(42, 70)
    dorm = r.uniform(120, 210)
    act2 = r.uniform(42, 70)
    for t in poisson_times(r, T0, act1, p["sessions_per_day"]):
        a.chat(t, a.person(r.choices(old, w)[0]), 0.55, 3.0)
    for t in poisson_times(r, T0 + act1 * DAY, dorm, 0.15):
        a.add(t, a.person(r.choice(old)), "incoming")
    mix = old[:6] + new[:6]
    r.shuffle(mix)
    for t in poisson_times(r, T0 + (act1 + dorm) * DAY, act2, p["sessions_per_day"]):
        a.chat(t, a.person(r.choices(mix, w)[0]), 0.55, 3.0)


def g_heavy(a, p):
    r = a.rng
    ppl = [f"u{i}" for i in range(45)]
    cs = [a.person(x) for x in ppl]
    grps = [a.group(f"g{i}", r.sample(ppl, r.randint(4, 20)), f"Room {i}") for i in range(15)]
    allc = cs + grps
    w = zipf_weights(len(allc), 0.9)
    r.shuffle(w)
    for t in poisson_times(r, T0, p["days"], p["sessions_per_day"]):
        cid = r.choices(allc, w)[0]
        isg = cid.startswith("grp-")
        a.chat(t, cid, 0.5 if not isg else 0.3, 8.0, 0.6 if not isg else 0.4, gap=20.0)


SHAPES = {
    "s_support": (1, g_support, dict(accounts=6, days=120, tickets_per_day=35, internal_per_day=6)),
    "s_family": (2, g_family, dict(accounts=8, days=240, members=5, family_group_per_day=5,
                                   dm_family_per_day=2, friends_per_day=3)),
    "s_lurker": (3, g_lurker, dict(accounts=6, days=120, channels=8, posts_per_day=120, thread_p=0.25,
                                   reply_thread_p=0.12, channel_posts_per_day=1.5, dm_per_day=3)),
    "s_penpal": (4, g_penpal, dict(accounts=12, days=365, pals=6, other_per_day=0.15)),
    "s_forward": (5, g_forward, dict(accounts=8, days=240, chats_per_day=5, forwards_per_day=0.5)),
    "s_night": (6, g_night, dict(accounts=8, days=240, shift_h=-8, sessions_per_day=6, day_in_per_day=2)),
    "s_dormant": (7, g_dormant, dict(accounts=20, days=0, sessions_per_day=5)),
    "s_heavy": (8, g_heavy, dict(accounts=3, days=30, sessions_per_day=300)),
}


def write_shape(shape):
    """One account of `shape`, as rows for `history_generation.main`."""
    _, generate, parameters = SHAPES[shape]

    def write(name, rng):
        account = Acc(name, rng)
        generate(account, parameters)
        return account.lines()
    return write


if __name__ == "__main__":
    main({shape: (number, p["accounts"], write_shape(shape)) for shape, (number, _, p) in SHAPES.items()}, 2024, __doc__)
