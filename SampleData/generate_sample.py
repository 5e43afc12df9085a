#!/usr/bin/env python3
"""Writes SampleData/donations.jsonl: a small, realistic, seeded donation history for the demo and the tests.

Four weeks of November 2026 for one person ("me"): a close friend who sends photos, a steady colleague, family,
a climbing group that gets renamed and a new picture, a book club that shares links, a work group that is mostly
incoming, an old burst that fades, a newcomer this week, and an office that only ever writes. Run it again to
regenerate the same file: python3 SampleData/generate_sample.py > SampleData/donations.jsonl
"""
import json
import random
from datetime import datetime, timedelta, timezone

random.seed(20261130)
START = datetime(2026, 11, 2, tzinfo=timezone.utc)

ME = {"customIdentifier": "me", "displayName": "Robin Park", "isMe": True}
PEOPLE = {
    "juan": {"customIdentifier": "u-juan", "displayName": "Juan Chavez",
             "personHandle": {"value": "juan@example.com", "type": "emailAddress"},
             "contactIdentifier": "C-17", "image": "avatars/juan.png"},
    "priya": {"customIdentifier": "u-priya", "displayName": "Priya Raman",
              "personHandle": {"value": "+15550102", "type": "phoneNumber"}, "image": "avatars/priya.png"},
    "mom": {"customIdentifier": "u-mom", "displayName": "Mom",
            "personHandle": {"value": "+15550100", "type": "phoneNumber"}, "contactIdentifier": "C-1"},
    "dad": {"customIdentifier": "u-dad", "displayName": "Dad",
            "personHandle": {"value": "+15550101", "type": "phoneNumber"}},
    "ana": {"customIdentifier": "u-ana", "displayName": "Ana Park",
            "personHandle": {"value": "ana@example.com", "type": "emailAddress"}},
    "sam": {"customIdentifier": "u-sam", "displayName": "Sam Lee",
            "personHandle": {"value": "sam@example.com", "type": "emailAddress"}, "image": "avatars/sam.png"},
    "lee": {"customIdentifier": "u-lee", "displayName": "Lee Wong"},
    "kim": {"customIdentifier": "u-kim", "displayName": "Kim Osei"},
    "tom": {"customIdentifier": "u-tom", "displayName": "Tom Berg"},
    "alex": {"customIdentifier": "u-alex", "displayName": "Alex Moreau",
             "personHandle": {"value": "alex@example.org", "type": "emailAddress"}},
    "office": {"customIdentifier": "u-office", "displayName": "Dr. Ortiz Dental",
               "personHandle": {"value": "+15550199", "type": "phoneNumber"}},
}

# conversation id -> (group name or None, members, service, image)
CONVERSATIONS = {
    "u-juan": (None, ["juan"], "chat.example", None),
    "u-priya": (None, ["priya"], "chat.example", None),
    "u-mom": (None, ["mom"], "sms", None),
    "u-sam": (None, ["sam"], "chat.example", None),
    "u-alex": (None, ["alex"], "chat.example", None),
    "u-office": (None, ["office"], "sms", None),
    "g-climbing": ("Climbers", ["juan", "sam", "lee"], "chat.example", "avatars/climbers.png"),
    "g-family": ("Family", ["mom", "dad", "ana"], "chat.example", "avatars/family.png"),
    "g-bookclub": ("Book club", ["priya", "kim", "tom"], "chat.example", "avatars/books.png"),
    "g-work": ("Release team", ["priya", "lee", "tom", "kim"], "chat.example", None),
}

events = []


def add(conversation, day, hour, direction, content=None, sender=None):
    date = START + timedelta(days=day, hours=hour, minutes=random.randrange(60), seconds=random.randrange(60))
    events.append((date, conversation, direction, content, sender))


# Juan: a close friend, most days, lots of photos, busiest lately.
for day in range(28):
    if random.random() < 0.35 + day / 50:
        for _ in range(random.randint(1, 4)):
            add("u-juan", day, random.choice([12, 18, 21]), random.choice(["outgoing", "incoming"]),
                "public.jpeg" if random.random() < 0.4 else None)
# Priya: a colleague, steady on weekdays, sometimes a link.
for day in range(28):
    if day % 7 < 5 and random.random() < 0.6:
        add("u-priya", day, 10, random.choice(["outgoing", "incoming", "incoming"]),
            "public.url" if random.random() < 0.3 else None)
# Mom: every few days, both ways, over SMS.
for day in range(0, 28, 3):
    add("u-mom", day, 19, "incoming")
    add("u-mom", day, 19, "outgoing")
# Sam: a burst in the first week, then silence.
for day in range(0, 6):
    for _ in range(3):
        add("u-sam", day, 20, random.choice(["outgoing", "incoming"]))
# Alex: new this week.
for day in (25, 26, 27):
    add("u-alex", day, 11, "incoming")
    add("u-alex", day, 11, "outgoing")
# The dentist's office only writes.
for day in (3, 17, 27):
    add("u-office", day, 9, "incoming")
# Climbing crew: weekend bursts with photos; renamed and given a new picture in week 3.
for weekend in (5, 12, 19, 26):
    for _ in range(random.randint(5, 9)):
        add("g-climbing", weekend, random.choice([8, 17]), random.choice(["outgoing", "incoming", "incoming"]),
            "public.jpeg" if random.random() < 0.5 else None, random.choice(["juan", "sam", "lee"]))
# Family: a few times a week, photos from Dad.
for day in range(28):
    if random.random() < 0.3:
        add("g-family", day, 20, random.choice(["outgoing", "incoming"]),
            "public.heic" if random.random() < 0.3 else None, random.choice(["mom", "dad", "ana"]))
# Book club: links before each meeting.
for day in (1, 2, 15, 16):
    for _ in range(3):
        add("g-book" + "club", day, 21, random.choice(["outgoing", "incoming"]), "public.url",
            random.choice(["priya", "kim", "tom"]))
# Release team: busy on weekdays, mostly incoming.
for day in range(28):
    if day % 7 < 5:
        for _ in range(random.randint(2, 6)):
            add("g-work", day, random.choice([9, 11, 14, 16]), "incoming" if random.random() < 0.85 else "outgoing",
                None, random.choice(["priya", "lee", "tom", "kim"]))

events.sort(key=lambda event: event[0])
for number, (date, conversation, direction, content, sender_key) in enumerate(events, start=1):
    group, members, service, image = CONVERSATIONS[conversation]
    if conversation == "g-climbing" and date >= START + timedelta(days=16):
        group, image = "Climbing crew", "avatars/climbing.png"  # the rename and the new picture
    if direction == "outgoing":
        sender = ME
    elif sender_key:
        sender = PEOPLE[sender_key]
    else:
        sender = PEOPLE[members[0]]
    intent = {"conversationIdentifier": conversation}
    if group:
        intent["speakableGroupName"] = group
    intent["serviceName"] = service
    intent["sender"] = sender
    intent["recipients"] = [PEOPLE[key] for key in members]
    if image:
        intent["image"] = image
    if content:
        intent["contentTypes"] = [content]
    donation = {"account": "default", "identifier": "d-%04d" % number, "groupIdentifier": conversation,
                "date": date.strftime("%Y-%m-%dT%H:%M:%SZ"), "direction": direction, "intent": intent}
    print(json.dumps(donation, ensure_ascii=False, separators=(",", ":")))
