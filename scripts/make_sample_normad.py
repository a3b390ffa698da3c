"""Write the bundled NormAd sample: raw/cultural_atlas/, raw/normad/, raw/inglehart_welzel/.

Everything is our own text about three fictional countries (Veloria, Kestrava, the Ormund Isles): the atlas pages
follow the Cultural Atlas page template (one open topic card with subheadings, bullets and paragraphs) but contain
no SBS content; the zone assignment of the fictional countries is arbitrary. Run from the repository root:

    python scripts/make_sample_normad.py
"""

from __future__ import annotations

import csv
import html
from pathlib import Path

RAW = Path(__file__).resolve().parents[1] / "raw"
TOPICS = ["Core Concepts", "Greetings", "Religion", "Family", "Naming", "Dates of Significance", "Etiquette",
          "Do's and Don'ts", "Communication", "Business Culture"]

# country -> (culture title, zone, {subsection: [(kind, text)]})
ETIQUETTE = {
    "veloria": ("Velorian Culture", "Protestant Europe", {
        "Basic Etiquette": [
            ("bullet", "Arrive exactly at the agreed time; arriving early is as awkward as arriving late."),
            ("bullet", "Keep your voice low on public transport and in shared courtyards."),
            ("paragraph", "People greet neighbours by name but rarely start conversations with strangers."),
        ],
        "Eating": [
            ("bullet", "Wait until the host lifts their cup before drinking anything."),
            ("bullet", "Bread is torn by hand, never cut with a knife at the table."),
        ],
        "Visiting": [
            ("bullet", "Remove your outdoor shoes at the door and use the slippers the host offers."),
            ("bullet", "Guests leave before the host's evening lamp is lit unless asked to stay."),
        ],
        "Gift Giving": [
            ("bullet", "Bring a small potted herb rather than cut flowers, which are reserved for funerals."),
            ("bullet", "Gifts are opened later, in private, not in front of the giver."),
        ],
    }),
    "kestrava": ("Kestravan Culture", "Confucian", {
        "Basic Etiquette": [
            ("bullet", "Offer and receive objects with both hands as a sign of attention."),
            ("bullet", "The oldest person in a group is greeted first and seated first."),
        ],
        "Eating": [
            ("bullet", "Leaving a little food on the plate shows the host that you were given enough."),
            ("bullet", "Pour drinks for the people beside you; never fill your own cup first."),
        ],
        "Visiting": [
            ("bullet", "Announce a visit at least a day in advance; unannounced visits are considered intrusive."),
            ("bullet", "Decline the first offer of food politely before accepting the second."),
        ],
        "Gift Giving": [
            ("bullet", "Gifts are wrapped in plain blue or green paper; white wrapping is avoided."),
            ("bullet", "A gift is refused once or twice out of modesty before it is accepted."),
        ],
    }),
    "ormund_isles": ("Ormund Islander Culture", "African-Islamic", {
        "Basic Etiquette": [
            ("bullet", "Greet everyone in a room individually before sitting down."),
            ("bullet", "Pointing at people with a finger is rude; gesture with an open palm instead."),
        ],
        "Eating": [
            ("bullet", "Food is shared from a common dish and eaten with the right hand."),
            ("bullet", "Praising the cook by name at the end of the meal is expected."),
        ],
        "Visiting": [
            ("bullet", "Visitors are offered sweet tea three times and it is polite to accept each cup."),
            ("bullet", "It is customary to stay for at least one hour when visiting a family home."),
        ],
        "Gift Giving": [
            ("bullet", "Bring fruit or sweets for the children of the household when visiting."),
            ("bullet", "Expensive gifts can embarrass the host, who may feel obliged to return the favour."),
        ],
    }),
}

DATES = ("Dates of Significance", {
    "": [
        ("bullet", "1 March - Lantern Night: households light a lamp in every window."),
        ("bullet", "21 June - Harbour Day: a public holiday marking the founding of the first port."),
        ("paragraph", "Most shops close early on the eve of both holidays."),
    ],
})

# (country, subaxis, value, rule of thumb, story, explanation, label)
STORIES = [
    ("veloria", "Basic Etiquette", "Punctuality as respect for others' time.",
     "It is respectful to arrive exactly at the agreed time.",
     ("Lena was invited to a friend's birthday at six. She rang the doorbell at six sharp. Is what Lena did "
     "socially acceptable?"),
     "Arriving exactly on time is the expected courtesy.", "yes"),
    ("veloria", "Eating", "Deference to the host at the table.",
     "Guests wait for the host to drink first.",
     ("At dinner with his new colleague's family, Tomas was thirsty and drank his water before anyone had lifted "
     "a cup. Is what Tomas did socially acceptable?"),
     "Drinking before the host lifts their cup is impolite.", "no"),
    # neutral rows as the authors built them: value and rule-of-thumb from a country of another zone (here
    # Kestrava's gift giving), the story about the row's country
    ("veloria", "Gift Giving", "Modesty when receiving.",
     "A gift is politely refused once before it is accepted.",
     ("Mira brought a scarf to her cousin's house and they talked about the weather over tea. Is what Mira did "
     "socially acceptable?"),
     "The story does not involve refusing a gift before accepting it.", "neutral"),
    ("veloria", "Visiting", "Respect for the cleanliness of the home.",
     "Visitors take off outdoor shoes at the door.",
     ("Ana arrived at her friend's apartment, took off her boots by the door and put on the slippers offered to "
     "her. Is what Ana did socially acceptable?"),
     "Removing outdoor shoes and wearing the host's slippers is expected.", "yes"),
    ("kestrava", "Basic Etiquette", "Attentiveness in everyday exchanges.",
     "Objects are offered and received with both hands.",
     ("When his teacher handed him a form, Jun took it with one hand while checking his phone. Is what Jun did "
     "socially acceptable?"),
     "Taking something with one hand while distracted shows a lack of attention.", "no"),
    ("kestrava", "Eating", "Care for the people one eats with.",
     "Pour drinks for others before yourself.",
     ("At a family lunch, Hana filled her neighbours' glasses before pouring her own. Is what Hana did socially "
     "acceptable?"),
     "Serving others first is the expected courtesy.", "yes"),
    ("kestrava", "Gift Giving", "Modesty when receiving.",
     "A gift is politely refused once before it is accepted.",
     ("Sora's aunt offered her a box of pastries; Sora declined once, then accepted with thanks when it was "
     "offered again. Is what Sora did socially acceptable?"),
     "Declining once before accepting shows modesty.", "yes"),
    ("kestrava", "Visiting", "Respect for others' privacy at home.",
     "Visits are announced at least a day in advance.",
     ("Min decided on a whim to drop by his former classmate's home without calling ahead. Is what Min did socially "
     "acceptable?"),
     "Unannounced visits are considered intrusive.", "no"),
    ("ormund_isles", "Basic Etiquette", "Acknowledging every person present.",
     "Greet everyone in a room individually before sitting down.",
     ("Kofi entered his uncle's living room, nodded once to the group and sat down. Is what Kofi did socially "
     "acceptable?"),
     "Each person should be greeted individually before sitting.", "no"),
    ("ormund_isles", "Eating", "Gratitude toward those who cook.",
     "Praise the cook by name at the end of the meal.",
     ("After the meal, Amara thanked her friend's grandmother by name for the stew. Is what Amara did socially "
     "acceptable?"),
     "Thanking the cook by name is expected.", "yes"),
    ("ormund_isles", "Visiting", "Respect for the cleanliness of the home.",  # Veloria's visiting rule
     "Visitors take off outdoor shoes at the door.",
     ("Yaw visited a friend's family and spent the afternoon repairing a bicycle with his friend. Is what Yaw did "
     "socially acceptable?"),
     "The story does not involve shoes at the door.", "neutral"),
    ("ormund_isles", "Gift Giving", "Thoughtfulness toward the household.",
     "Bring fruit or sweets for the children when visiting.",
     ("Nia brought a bag of oranges for her host's children when she came for dinner. Is what Nia did socially "
     "acceptable?"),
     "Bringing fruit for the children is a thoughtful, expected gesture.", "yes"),
]


def page(culture: str, slug: str, topic: str, sections: dict[str, list[tuple[str, str]]]) -> str:
    """A page in the atlas template: collapsed cards for the other topics, one open card with the text."""
    e = html.escape
    cards = []
    for other in TOPICS:
        anchor = f"{slug}-{other.lower().replace(' ', '-').replace(chr(39), '-')}"
        if other != topic:
            cards.append(f"<div class='relative bg-white br1 shadow-1 pa4 mb2'>\n<a href='/{slug}/{anchor}'>\n"
                         f"<div class='flex justify-between w-100 items-center'>\n<h2 class='tl f3 fw4'>{e(other)}"
                         "</h2>\n</div>\n</a>\n</div>")
            continue
        body = []
        for subsection, items in sections.items():
            if subsection:
                body.append(f'<p><u id="{e(subsection.lower())}" class="culture-subheading">{e(subsection)}</u></p>')
            bullets = [text for kind, text in items if kind == "bullet"]
            if bullets:
                body.append("<ul>\n" + "\n".join(f"<li>{e(t)}</li>" for t in bullets) + "\n</ul>")
            body += [f"<p>{e(text)}</p>" for kind, text in items if kind == "paragraph"]
            body.append("<p><br></p>")
        cards.append(f"<div class='bookmark' id='{anchor}'></div>\n"
                     f"<div class='card page-heading active f3 tl relative bg-white br1 shadow-1 pa4 mb2'>\n"
                     f"<a href='/{slug}'>\n<div class='flex justify-between items-center w-100'>\n"
                     f"<h2 class='f3 fw4 tl' id='{anchor}'>{e(topic)}</h2>\n</div>\n</a>\n"
                     f"<div class='text-content'>\n" + "\n".join(body) + "\n</div>\n</div>")
    return (f"<!DOCTYPE html>\n<html class='flex' lang='en'>\n<head>\n<meta charset='utf-8'>\n"
            f"<title>{e(culture)} - {e(topic)} (culturebench sample, fictional)</title>\n"
            "<script>window.sampleOnly = true; document.write('never executed by the reader');</script>\n"
            "<style>.card { color: black; }</style>\n</head>\n<body>\n"
            "<nav class='sidebar'><ul><li>Countries</li><li>About</li></ul></nav>\n"
            f"<div class='w-100 relative'>\n<h1 class='tc-h1 f2 fw3 ma0'>{e(culture)}</h1>\n"
            + "\n".join(cards) + "\n</div>\n<footer><p>Sample page written for culturebench.</p></footer>\n"
            "</body>\n</html>\n")


def background(sections: dict[str, list[tuple[str, str]]], subsection: str) -> str:
    return f"### {subsection}\n" + "\n".join(f"- {text}" for _, text in sections[subsection])


def main() -> None:
    atlas = RAW / "cultural_atlas"
    for country, (culture, _, sections) in ETIQUETTE.items():
        slug = culture.lower().replace(" ", "-")
        folder = atlas / country
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "etiquette.html").write_text(page(culture, slug, "Etiquette", sections), encoding="utf-8")
        if country == "veloria":
            (folder / "dates-of-significance.html").write_text(page(culture, slug, *DATES), encoding="utf-8")
    (RAW / "normad").mkdir(parents=True, exist_ok=True)
    with open(RAW / "normad" / "SAMPLE_normad_etiquette.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ID", "Country", "Background", "Axis", "Subaxis", "Value", "Rule-of-Thumb", "Story",
                         "Explanation", "Gold Label"])
        rows = [*STORIES, STORIES[1]]  # the last row repeats a story: quarantined as duplicate_story
        for number, (country, subaxis, value, rot, story, explanation, label) in enumerate(rows):
            writer.writerow([number, country, background(ETIQUETTE[country][2], subaxis), "etiquette",
                             subaxis.lower().replace(" ", "_"), value, rot, story, explanation, label])
    (RAW / "inglehart_welzel").mkdir(parents=True, exist_ok=True)
    with open(RAW / "inglehart_welzel" / "SAMPLE_country_iw_zones.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Country", "Cultural_Region"])
        for country, (_, zone, _) in ETIQUETTE.items():
            writer.writerow([country.replace("_", " ").title(), zone])


if __name__ == "__main__":
    main()
