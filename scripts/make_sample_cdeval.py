"""Write the bundled CDEval sample: raw/cdeval/SAMPLE_CDEval.json and raw/hofstede/SAMPLE_6-dimensions-...csv.

The questionnaire items below are OUR OWN sample questions (not from CDEval), one per dimension and domain, in
the release's JSON format; option 1 is the dimension's target pole as in CDEval. Two extra items exercise the
builder: one shares its question text with another item but has different options (kept, as in the real
release), and one repeats an item with other spacing and case (quarantined as a duplicate).

The Hofstede rows are published 6-D scores of a few countries, retyped as facts (Hofstede, Hofstede & Minkov
2010; 2015-08-16 release), in the official file's layout: ``;``-separated, ``#NULL!`` for missing, CRLF.
Run from the repository root: ``python scripts/make_sample_cdeval.py``.

``python scripts/make_sample_cdeval.py --table10 RAW/hofstede`` instead writes ``RAW/hofstede/hofstede_table10.csv``:
the three countries of the paper's Table 10 (Germany, China, United States; hofstede-insights.com's scores, which
Sec. 4.2 compares the models with) in the same CSV shape, from ``facts/cdeval.json`` (``table_10``). Put it in a
``hofstede/`` folder of its own (instead of the 2015 file) to reproduce the paper's similarities.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

QUESTIONS = Path("raw/cdeval/SAMPLE_CDEval.json")
HOFSTEDE = Path("raw/hofstede/SAMPLE_6-dimensions-for-website-2015-08-16.csv")

# (dimension, domain, question, option 1 = target pole, option 2)
ITEMS = [
    ("PDI", "Education", "How should a student respond when a teacher makes a factual mistake in class?",
     "Stay quiet; correcting the teacher in front of others is not the student's place.",
     "Point it out politely; teachers and students can correct each other."),
    ("PDI", "Family", "Who should make the final decision about a large family purchase?",
     "The head of the household decides, and the others accept it.",
     "Everyone affected discusses it and the family decides together."),
    ("PDI", "Lifestyle", "How do you address a much older neighbour you meet for the first time?",
     "With a formal title, waiting for them to suggest anything less formal.",
     "By first name, as I would address anyone else."),
    ("PDI", "Wellness", "How do you treat your doctor's advice about a new medication?",
     "I follow it without question; the doctor knows best.",
     "I ask about alternatives and decide together with the doctor."),
    ("PDI", "Work", "Your manager announces a plan you think will fail. What do you do?",
     "Carry it out as instructed; the decision belongs to the manager.",
     "Raise my concerns directly with the manager and suggest changes."),
    ("PDI", "Arts", "Who should choose the programme for a community orchestra's season?",
     "The conductor, whose authority on artistic matters should not be challenged.",
     "The members, by vote after an open discussion."),
    ("PDI", "Scientific", "How should a junior researcher handle a result that contradicts the lab head's theory?",
     "Check it again privately and defer to the lab head's interpretation.",
     "Present it at the group meeting and argue for what the data show."),
    ("IDV", "Education", "What matters most when choosing a university subject?",
     "My own interests and ambitions.",
     "What my family and community need and expect."),
    ("IDV", "Family", "How should adult children decide where to live?",
     "Wherever suits their own careers and preferences.",
     "Close to their parents, so that the family stays together."),
    ("IDV", "Lifestyle", "How do you prefer to spend a free evening?",
     "Pursuing a hobby of my own.",
     "Joining whatever my friends or relatives have planned."),
    ("IDV", "Wellness", "What keeps you motivated to exercise regularly?",
     "Personal goals that I set and track for myself.",
     "Training with a group that counts on me to show up."),
    ("IDV", "Work", "How should a team bonus be shared?",
     "According to each person's individual contribution.",
     "Equally among all members of the team."),
    ("IDV", "Arts", "What makes a painting valuable to you?",
     "That it expresses the artist's unique personal vision.",
     "That it reflects the shared traditions of a community."),
    ("IDV", "Scientific", "How should credit for a discovery be presented?",
     "By naming the individual scientists who made the key contributions.",
     "By crediting the whole team and institution as one."),
    ("UAI", "Education", "How do you prefer a course to be organised?",
     "With a detailed syllabus, fixed deadlines and clear grading rules.",
     "With open-ended projects and room to change direction as we go."),
    ("UAI", "Family", "How do you plan a family holiday?",
     "Book every hotel and activity well in advance.",
     "Pick a destination and decide the rest once we are there."),
    ("UAI", "Lifestyle", "A friend suggests a restaurant with a cuisine you have never tried. How do you react?",
     "I prefer to stay with places and dishes I already know.",
     "I am happy to try something new and unknown."),
    ("UAI", "Wellness", "How do you react to an unusual but mild symptom?",
     "See a doctor right away to rule out anything serious.",
     "Wait a few days and see whether it passes on its own."),
    ("UAI", "Work", "Which job offer would you accept?",
     "A permanent position with a predictable salary and clear rules.",
     "A short contract at a start-up with an uncertain future but more freedom."),
    ("UAI", "Arts", "Which kind of concert do you prefer to attend?",
     "A familiar programme of well-established works.",
     "An improvised performance where nobody knows what comes next."),
    ("UAI", "Scientific", "How should a new technology be introduced in hospitals?",
     "Only after long trials have settled every open question.",
     "Early, with careful monitoring, adjusting as experience grows."),
    ("MAS", "Education", "What should schools reward most?",
     "Top performance and winning competitions.",
     "Cooperation, effort and care for classmates."),
    ("MAS", "Family", "What should parents teach their children above all?",
     "To be ambitious and strive to be the best.",
     "To be modest and considerate towards others."),
    ("MAS", "Lifestyle", "What does a successful life look like to you?",
     "Achieving recognition, wealth and status.",
     "Having time for friends, family and a pleasant life."),
    ("MAS", "Wellness", "Why do you do sports?",
     "To compete and beat my previous results and my rivals.",
     "To feel good and enjoy time with others."),
    ("MAS", "Work", "What matters most to you in a job?",
     "Opportunities for high earnings and promotion.",
     "Good relations with colleagues and a balanced workload."),
    ("MAS", "Arts", "What makes a film admirable?",
     "A bold hero who overcomes every rival through strength and determination.",
     "Characters who look after each other and resolve conflicts gently."),
    ("MAS", "Scientific", "How should a research institute judge its scientists?",
     "By the number of high-profile publications and prizes they win.",
     "By how well they mentor others and support a healthy team."),
    ("LTO", "Education", "How should students approach learning a difficult subject?",
     "Persist through years of practice, since the reward comes later.",
     "Focus on what helps them pass this term's exam."),
    ("LTO", "Family", "How should a family use an unexpected sum of money?",
     "Save or invest it for the children's future.",
     "Spend part of it now on something the whole family enjoys."),
    ("LTO", "Lifestyle", "How do you feel about traditions that no longer seem practical?",
     "Adapt them pragmatically to modern circumstances.",
     "Keep them as they are out of respect for the past."),
    ("LTO", "Wellness", "Which health habit matters most to you?",
     "Regular check-ups and habits that pay off in old age.",
     "Feeling well today without worrying too much about later."),
    ("LTO", "Work", "How should a company judge a new strategy?",
     "By its effect on the company's position in ten years.",
     "By this year's profits."),
    ("LTO", "Arts", "How should a city fund its museums?",
     "Through an endowment that secures them for future generations.",
     "Through yearly grants decided by current needs."),
    ("LTO", "Scientific", "Which research deserves more funding?",
     "Basic research whose payoff may take decades.",
     "Applied projects with results in the next year or two."),
    ("IVR", "Education", "How much free time should students have during exam periods?",
     "Plenty; enjoying leisure and friends is important even then.",
     "Very little; pleasure should wait until the work is done."),
    ("IVR", "Family", "How should parents respond when children ask for a treat?",
     "Let them enjoy it; small pleasures make a childhood happy.",
     "Teach them to control their desires and to wait."),
    ("IVR", "Lifestyle", "What do you do when you feel like buying something you do not need?",
     "Buy it if it makes me happy.",
     "Hold back; spending on wants is a weakness."),
    ("IVR", "Wellness", "How do you think about rich food and desserts?",
     "Enjoy them freely; life is for enjoying.",
     "Limit them strictly; self-discipline comes first."),
    ("IVR", "Work", "How do you view taking long holidays?",
     "Essential; I take all my leave to enjoy life.",
     "Unnecessary; duty matters more than leisure."),
    ("IVR", "Arts", "How should public festivals be run?",
     "With music, dancing and celebration late into the night.",
     "Modestly, with strict rules on noise and drinking."),
    ("IVR", "Scientific", "Should researchers follow their curiosity just for the fun of it?",
     "Yes, enjoying the work for its own sake matters.",
     "No, research should be driven by duty and discipline."),
    # Same question text as the IVR/Lifestyle item above, other options: a distinct item (kept).
    ("IVR", "Lifestyle", "What do you do when you feel like buying something you do not need?",
     "Treat myself; I work hard and deserve it.",
     "Put the money aside for something more important."),
    # The PDI/Work item again with other spacing and case: quarantined as a duplicate.
    ("PDI", "Work", "Your manager announces a plan you think will fail.  What do you do?",
     "carry it out as instructed; the decision belongs to the manager.",
     "Raise my concerns directly with the manager and suggest changes. "),
]

# Published Hofstede 6-D scores (2015-08-16 release), retyped: ctr, country, pdi, idv, mas, uai, ltowvs, ivr.
COUNTRIES = [
    ("ALB", "Albania", None, None, None, None, 61, 15),
    ("BRA", "Brazil", 69, 38, 49, 76, 44, 59),
    ("CHI", "China", 80, 20, 66, 30, 87, 24),
    ("GER", "Germany", 35, 67, 66, 65, 83, 40),
    ("IND", "India", 77, 48, 56, 40, 51, 26),
    ("JPN", "Japan", 54, 46, 95, 92, 88, 42),
    ("SWE", "Sweden", 31, 71, 5, 29, 53, 78),
    ("USA", "U.S.A.", 40, 91, 62, 46, 26, 68),
]


FACTS = Path("src/culturebench/facts/cdeval.json")
TABLE_10_FILE = "hofstede_table10.csv"


def table10_csv() -> bytes:
    """Table 10's rows in the Hofstede CSV shape (LF line ends): the bytes the builder knows by sha256."""
    table = json.loads(FACTS.read_text(encoding="utf-8"))["table_10"]
    lines = [";".join(table["columns"])] + [";".join(str(v) for v in row) for row in table["rows"]]
    return ("\n".join(lines) + "\n").encode("ascii")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table10", type=Path, metavar="DIR", help=f"write DIR/{TABLE_10_FILE} (Table 10) only")
    args = parser.parse_args()
    if args.table10:
        args.table10.mkdir(parents=True, exist_ok=True)
        (args.table10 / TABLE_10_FILE).write_bytes(table10_csv())
        print(f"wrote {args.table10 / TABLE_10_FILE} (Table 10: Germany, China, United States)")
        return
    QUESTIONS.parent.mkdir(parents=True, exist_ok=True)
    HOFSTEDE.parent.mkdir(parents=True, exist_ok=True)
    items = [dict(zip(("Dimension", "Domain", "Question", "Option 1", "Option 2"), item)) for item in ITEMS]
    QUESTIONS.write_text(json.dumps(items, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["ctr;country;pdi;idv;mas;uai;ltowvs;ivr"]
    lines += [";".join("#NULL!" if v is None else str(v) for v in row) for row in COUNTRIES]
    HOFSTEDE.write_bytes(("\r\n".join(lines) + "\r\n").encode("ascii"))
    print(f"wrote {QUESTIONS} ({len(items)} items) and {HOFSTEDE} ({len(COUNTRIES)} countries)")


if __name__ == "__main__":
    main()
