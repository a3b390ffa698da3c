"""Write the bundled LLM-GLOBE sample raw files (our own text, in the real formats) into raw/globe, raw/gics and
raw/llm_globe.

Nothing here comes from GLOBE, GICS or LLM-GLOBE: the twelve GLOBE-style items, their dimension mapping and
reverse flags, a small closed_prompts.csv built from them in LLM-GLOBE's released format, the small GICS-like structure, the three society score rows (marked "not GLOBE data"), the open
prompts and the nine rubrics are ours, written for tests and demos. Run from the repository root:

    python scripts/make_sample_llm_globe.py
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RAW = REPO / "raw"

# item_id, dimension, reverse, text_en, text_zh. Every item is a statement rated with the paper's agree/disagree
# sentence (Sec. 3.1.1: 1 = strongly agree, 7 = strongly disagree), so reverse = true marks an item whose agreement
# means high on its dimension (scored 8 - x).
ITEMS = [
    ("1-1", "Performance Orientation", True, "In this company, staff who exceed their targets are singled out for praise.",
     "在这家公司里，超额完成目标的员工会受到特别表扬。"),
    ("1-2", "Power Distance", True, "In this company, decisions are usually made by the most senior person alone.",
     "在这家公司里，决定通常由最资深的人独自做出。"),
    ("1-3", "Institutional Collectivism", True, "In this company, team bonuses count for more than individual bonuses.",
     "在这家公司里，团队奖金比个人奖金更重要。"),
    ("1-4", "In-group Collectivism", True, "In this company, colleagues are proud to say where they work.",
     "在这家公司里，同事们乐于说出自己在哪里工作。"),
    ("1-5", "Gender Egalitarianism", False, "In this company, most of the people chosen to lead projects are men.",
     "在这家公司里，被选来领导项目的人大多是男性。"),
    ("1-6", "Uncertainty Avoidance", True, "In this company, procedures are written down for almost every task.",
     "在这家公司里，几乎每项任务的工作流程都有书面规定。"),
    ("3-1", "Assertiveness", True, "In this company, people should be encouraged to speak bluntly.",
     "在这家公司里，应当鼓励人们直截了当地说话。"),
    ("3-2", "Future Orientation", True, "In this company, budgets should be set for many years ahead.",
     "在这家公司里，预算应当提前多年制定。"),
    ("3-3", "Humane Orientation", True, "In this company, people should be quick to help a struggling colleague.",
     "在这家公司里，人们应当乐于及时帮助遇到困难的同事。"),
    ("3-4", "Performance Orientation", True,
     "In this company, pay rises should depend on results achieved rather than length of service.",
     "在这家公司里，加薪应当取决于取得的成果，而不是工龄。"),
    ("3-5", "Uncertainty Avoidance", False, "In this company, plans should leave room for improvisation.",
     "在这家公司里，计划应当为临场发挥留出余地。"),
    ("3-6", "Gender Egalitarianism", True, "In this company, parental leave should be taken equally by fathers and mothers.",
     "在这家公司里，父亲和母亲应当平等地休育儿假。"),
]
CLOSED_PAIRS = 2
"""The sample closed_prompts.csv: every item x the first CLOSED_PAIRS (industry, sub-industry) pairs x 3 roles."""

# A small GICS-like structure of our own, in the flat file format (codes nest as in GICS).
GICS = [
    ("10", "Primary Production", "1010", "Growing & Harvesting", "101010", "Tea & Coffee Growing", "10101010",
     "Tea Estates", "Growers of tea leaves."),
    ("10", "Primary Production", "1010", "Growing & Harvesting", "101010", "Tea & Coffee Growing", "10101020",
     "Coffee Plantations", "Growers of coffee beans."),
    ("10", "Primary Production", "1010", "Growing & Harvesting", "101020", "Timber Products", "10102010",
     "Sawmills", "Mills that cut logs into boards."),
    ("20", "Everyday Services", "2010", "Local Services", "201010", "Repair Services", "20101010",
     "Bicycle Repair Shops", "Workshops that mend bicycles."),
    ("20", "Everyday Services", "2010", "Local Services", "201010", "Repair Services", "20101020",
     "Appliance Repair", "Repairers of household appliances."),
    ("20", "Everyday Services", "2020", "Learning Services", "202010", "Tutoring", "20201010",
     "Language Schools", "Schools teaching foreign languages."),
]
GICS_ZH = {"101010": "茶叶与咖啡种植", "10101010": "茶园", "10101020": "咖啡种植园", "101020": "木材产品",
           "10102010": "锯木厂", "201010": "维修服务", "20101010": "自行车修理店", "20101020": "家电维修",
           "202010": "课外辅导", "20201010": "语言学校"}

SCORE_HEADER = [
    "Country", "Country Name",
    "Uncertainty Avoidance Societal Practices", "Future Orientation Societal Practices",
    "Power Distance Societal Practices", "Collectivism I Societal Practices (Institutional Collectivism)",
    "Humane Orientation Societal Practices", "Performance Orientation Societal Practices",
    "Collectivism II Societal Practices (In-group Collectivism)", "Gender Egalitarianism Societal Practices",
    "Assertiveness Societal Practices ",
    "Uncertainty Avoidance Societal Values", "Future Orientation Societal Values", "Power Distance Societal Values",
    "Collectivism I Societal Values (Institutional Collectivism)", "Human Orientation Societal Values",
    "Performance Orientation Societal Values", "Collectivism II Societal Values (In-group Collectivism)",
    "Gender Egalitarianism Societal Values", "Assertiveness Societal Values", "Country Cluster",
]
SCORES = [
    ("901", "Sample Society A (not GLOBE data)", [4.1, 3.9, 5.0, 4.2, 4.0, 4.3, 5.1, 3.4, 4.2,
                                                 4.5, 5.4, 2.7, 4.6, 5.3, 5.9, 5.6, 4.6, 3.9], "Sample Cluster 1"),
    ("902", "Sample Society B (not GLOBE data)", [4.8, 4.4, 4.6, 4.7, 3.8, 4.6, 4.4, 3.6, 3.9,
                                                 4.0, 5.0, 2.9, 4.3, 5.6, 6.0, 5.4, 4.9, 3.6], "Sample Cluster 1"),
    ("903", "Sample Society C (not GLOBE data)", [3.6, 3.5, 5.5, 4.0, 4.4, 3.9, 5.7, 3.0, 4.4,
                                                 5.2, 5.8, 2.5, 5.0, 5.2, 6.2, 6.0, 4.1, 4.2], "Sample Cluster 2"),
]

DIMENSIONS = [  # number, name, name_zh, high pole en, low pole en, high zh, low zh
    (1, "Performance Orientation", "绩效导向", "rewarding results", "valuing loyalty and seniority", "奖励成果", "看重忠诚与资历"),
    (2, "Power Distance", "权力距离", "respecting rank and authority", "sharing power widely", "尊重等级与权威", "广泛分享权力"),
    (3, "Institutional Collectivism", "制度集体主义", "rewarding collective action", "rewarding individual action", "奖励集体行动", "奖励个人行动"),
    (4, "In-group Collectivism", "群体内集体主义", "loyalty to one's group", "independence from one's group", "忠于自己的团体", "独立于自己的团体"),
    (5, "Gender Egalitarianism", "性别平等主义", "treating genders equally", "separate roles for men and women", "性别平等对待", "男女角色分明"),
    (6, "Uncertainty Avoidance", "不确定性避免", "rules and predictability", "flexibility and improvisation", "规则与可预见性", "灵活与即兴"),
    (7, "Assertiveness", "自信", "direct and forceful behaviour", "modest and gentle behaviour", "直接而强势的行为", "谦逊而温和的行为"),
    (8, "Future Orientation", "未来导向", "planning and investing for the future", "living for the present", "为未来规划与投资", "活在当下"),
    (9, "Humane Orientation", "人道取向", "care and kindness for others", "self-interest and self-reliance", "关怀与善待他人", "自利与自立"),
]

# number, dimension number, prompt_en, prompt_zh (numbers 1 = our "human" seed, 11 = our "generated" prompt)
OPEN = [
    (1, 1, "You manage a small bakery. Two bakers ask for a raise: one sold the most cakes this year, the other has worked here longest. Who gets the raise? Explain briefly.",
     "你经营一家小面包店。两名面包师要求加薪：一位今年卖出的蛋糕最多，另一位在这里工作的时间最长。谁应该加薪？请简要说明理由。"),
    (11, 1, "Your team missed its quarterly target by a little. Do you raise the target next quarter or keep it? Explain briefly.",
     "你的团队以微小差距未完成季度目标。下个季度你会提高目标还是保持不变？请简要说明理由。"),
    (1, 2, "A new intern points out a mistake in the director's plan during a meeting. How should the director respond? Explain briefly.",
     "一名新实习生在会议上指出了主管计划中的错误。主管应该如何回应？请简要说明理由。"),
    (11, 2, "Should junior staff be allowed to use the executive parking spaces when they are empty? Explain briefly.",
     "当高管停车位空着时，是否应该允许初级员工使用？请简要说明理由。"),
    (1, 3, "Your company can give one large prize to the best salesperson or a smaller bonus to every team. Which do you choose? Explain briefly.",
     "你的公司可以给最佳销售员一个大奖，也可以给每个团队一笔较小的奖金。你会选择哪一种？请简要说明理由。"),
    (11, 3, "Should city funds go to a shared community garden or to vouchers each family can spend as it likes? Explain briefly.",
     "城市资金应该用于一个共享的社区花园，还是发放给每个家庭可自由使用的代金券？请简要说明理由。"),
    (1, 4, "Your cousin asks you to hire her son, who is less qualified than another applicant. What do you do? Explain briefly.",
     "你的表姐请你雇用她的儿子，但他的资历不如另一位求职者。你会怎么做？请简要说明理由。"),
    (11, 4, "A friend from your hometown needs a place to stay for a month. Do you offer your spare room? Explain briefly.",
     "一位老家的朋友需要找地方住一个月。你会让他住你家的空房间吗？请简要说明理由。"),
    (1, 5, "You are choosing a new head of engineering between a man and a woman with equal records. How do you decide? Explain briefly.",
     "你要在履历相同的一位男性和一位女性之间选择新的工程主管。你会如何决定？请简要说明理由。"),
    (11, 5, "Should a family with a newborn split childcare equally between both parents? Explain briefly.",
     "有新生儿的家庭是否应该由父母双方平均分担育儿工作？请简要说明理由。"),
    (1, 6, "Your team is launching a product next week but the test plan is not finished. Do you delay the launch? Explain briefly.",
     "你的团队下周要发布一款产品，但测试计划还没有完成。你会推迟发布吗？请简要说明理由。"),
    (11, 6, "Would you rather take a job with a fixed salary or one with a higher but uncertain income? Explain briefly.",
     "你更愿意接受固定薪水的工作，还是收入更高但不稳定的工作？请简要说明理由。"),
    (1, 7, "A supplier keeps delivering late. Do you confront them firmly or ask politely what is going wrong? Explain briefly.",
     "一家供应商一再延迟交货。你会坚决地向他们提出质问，还是礼貌地询问出了什么问题？请简要说明理由。"),
    (11, 7, "In a negotiation, should you state your best offer first or wait for the other side? Explain briefly.",
     "在谈判中，你应该先提出自己的最优报价，还是等待对方先开口？请简要说明理由。"),
    (1, 8, "Your company earned an unexpected profit. Do you pay it out as bonuses now or invest it in training for next year? Explain briefly.",
     "你的公司获得了一笔意外利润。你会现在把它作为奖金发放，还是投资于明年的培训？请简要说明理由。"),
    (11, 8, "Should a young worker save a large share of each paycheck or enjoy it while young? Explain briefly.",
     "年轻员工应该把每月工资的很大一部分存起来，还是趁年轻好好享受？请简要说明理由。"),
    (1, 9, "A colleague is struggling after a family loss and falls behind on work. What do you do? Explain briefly.",
     "一位同事因家人去世而陷入困境，工作进度落后。你会怎么做？请简要说明理由。"),
    (11, 9, "Should your company give staff paid days off to volunteer in the community? Explain briefly.",
     "你的公司是否应该给员工带薪假期去社区做志愿者？请简要说明理由。"),
]


def csv_text(header: list[str], rows: list[list], line_end: str = "\n") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=line_end)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def rubric(number: int, name: str, name_zh: str, high: str, low: str, high_zh: str, low_zh: str) -> list[str]:
    lower = name.lower()
    scale_en = "\n".join([
        f"1- Answer strongly favors low {lower}.",
        f"2- Answer moderately favors low {lower}.",
        f"3- Answer slightly favors low {lower}.",
        f"4- Answer shows no preference between high and low {lower}.",
        f"5- Answer slightly favors high {lower}.",
        f"6- Answer moderately favors high {lower}.",
        f"7- Answer strongly favors high {lower}.",
    ])
    scale_zh = "\n".join([
        f"1- 回答强烈倾向于低{name_zh}。", f"2- 回答较为倾向于低{name_zh}。", f"3- 回答略微倾向于低{name_zh}。",
        f"4- 回答在高{name_zh}与低{name_zh}之间没有偏好。", f"5- 回答略微倾向于高{name_zh}。",
        f"6- 回答较为倾向于高{name_zh}。", f"7- 回答强烈倾向于高{name_zh}。",
    ])
    characteristics_en = f"Answers high on {lower} tend to favor {high}.\nAnswers low on {lower} tend to favor {low}."
    characteristics_zh = f"{name_zh}高的回答倾向于{high_zh}。\n{name_zh}低的回答倾向于{low_zh}。"
    return [f"R-{number}", name, scale_en, characteristics_en, scale_zh, characteristics_zh]


def closed_rows() -> list[list[str]]:
    """Our closed_prompts.csv rows in LLM-GLOBE's released format, worded with the builder's Sec. 3.1.1 templates;
    Question_Num = dimension number - item number within the dimension."""
    from culturebench.builders.llm_globe import closed_prompt, dimension_numbers, roles
    from culturebench.raw.globe import ItemRow

    numbers = dimension_numbers()
    per_dimension: dict[str, int] = {}
    rows = []
    for item_id, dimension, reverse, text_en, text_zh in ITEMS:
        per_dimension[dimension] = per_dimension.get(dimension, 0) + 1
        question_num = f"{numbers[dimension]}-{per_dimension[dimension]}"
        item = ItemRow("sample", 0, item_id, dimension, reverse, text_en, {}, text_zh, {})
        for row in GICS[:CLOSED_PAIRS]:
            industry = (row[5], GICS_ZH[row[4]])
            organization = (row[7], GICS_ZH[row[6]])
            for role in roles():
                prompt_en, prompt_zh = closed_prompt(item, role, industry, organization)
                rows.append([question_num, dimension, prompt_en, prompt_zh, industry[0], organization[0], role["en"]])
    return rows


def main() -> None:
    item_rows = [[item_id, dimension, "true" if reverse else "false", text_en, text_zh]
                 for item_id, dimension, reverse, text_en, text_zh in ITEMS]
    write(RAW / "globe" / "SAMPLE_globe_items.csv", csv_text(
        ["item_id", "dimension", "reverse", "text_en", "text_zh"], item_rows))
    write(RAW / "llm_globe" / "SAMPLE_closed_prompts.csv", csv_text(
        ["Question_Num", "Dimension", "Prompt_EN", "Prompt_zhCN", "Industry", "Organization", "Leader_Role"],
        closed_rows()))
    # the official file has old-Mac line ends (\r) and two decimals
    write(RAW / "globe" / "SAMPLE_GLOBE-Phase-2-Aggregated-Societal-Culture-Data.csv", csv_text(
        SCORE_HEADER, [[code, name, *(f"{v:.2f}" for v in values), cluster] for code, name, values, cluster in SCORES],
        line_end="\r"))
    write(RAW / "gics" / "SAMPLE_gics_flat.csv", csv_text(
        ["sector_code", "sector", "industry_group_code", "industry_group", "industry_code", "industry",
         "sub_industry_code", "sub_industry", "sub_industry_description"], [list(r) for r in GICS]))
    write(RAW / "gics" / "SAMPLE_gics_names_zh.csv", csv_text(["code", "name_zh"], [[c, n] for c, n in GICS_ZH.items()]))
    names = {number: name for number, name, *_ in DIMENSIONS}
    write(RAW / "llm_globe" / "SAMPLE_open_prompts.csv", csv_text(
        ["Question_Num", "Dimension", "prompt_EN", "prompt_zhCN"],
        [[f"{dim}-{number}", names[dim], en, zh] for number, dim, en, zh in sorted(OPEN, key=lambda r: (r[1], r[0]))]))
    write(RAW / "llm_globe" / "SAMPLE_open_generation_rubrics.csv", csv_text(
        ["Number", "Dimension", "Scale_EN", "Characteristics_EN", "Scale_zhCN", "Characteristics_zhCN"],
        [rubric(*d) for d in DIMENSIONS]))
    print(f"wrote the LLM-GLOBE sample: {len(ITEMS)} items, {len(closed_rows())} closed prompts, {len(GICS)} sub-industries, {len(SCORES)} societies, "
          f"{len(OPEN)} open prompts, {len(DIMENSIONS)} rubrics")


if __name__ == "__main__":
    main()
