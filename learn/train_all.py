"""``kgqa train all --kg NAME [--questions PATH ...]``: everything a KG's methods and ``auto`` read, learned
for that KG and installed with it (:mod:`kgqa.models.kg_models`).

1. **Questions.** The labelled questions under ``--questions`` (:mod:`kgqa.training.questions`; never a test
   split), and questions synthesised from the KG's own relation paths (:mod:`kgqa.training.synthesis`),
   which every KG has. Labelled questions are split by wording (a held-out share of wordings is never
   trained on); synthesised ones by wording family (family B is never trained on) and topic.
2. **Parts**, each timed: the entity linker's words (the KG's question words, name-word frequencies,
   initials), the chain and hop classifiers (sgrag's templates, FRAG's and SubgraphRAG's hop
   count), SimGRAG's relation phrases, FRAG's path ranker (what each relation arrives at), GSR's chain
   generator, SubgraphRAG's scorer.
3. **Route.** Every method answers the held-out questions (the labelled ones when the KG has any, and the
   synthesised ones, each pool weighing the same; without labelled ones, the methods that learned the
   synthesised wording are planned after the others: ``WORDING_FREE``); the policy that answers most of
   them is auto's route for this KG, when it beats the default route by a point, and the answer scorer is
   fitted on the answers it gives (:mod:`kgqa.learn.route`).
4. **Profile**, written last: what each part learned from, how long it took, how each method did.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kgqa.core.chains import chain_key, is_round_trip
from kgqa.core.errors import BadInput, KgNotReady
from kgqa.graph.kg import resolve_kg
from kgqa.learn.prompt_example import prompt_example
from kgqa.learn.route import measure_route, sample_route_questions
from kgqa.models import kg_models, registry
from kgqa.models.chain_vectors import chain_vectors_stamp
from kgqa.models.encoder import embed
from kgqa.models.kg_models import KgProfile, PartReport
from kgqa.models.path_scorer import set_ranks_sgrag
from kgqa.models.question_classifiers import mask_question
from kgqa.qa.methods import AUTO_CANDIDATES
from kgqa.qa.routing import ANSWER_SCORER, WORDING_FREE, policy_to_json
from kgqa.training.answer_types import Arrivals
from kgqa.training.questions import LabelledQuestion, kg_relations, read_labelled_questions
from kgqa.training.synthesis import SOURCE as SYNTHESISED
from kgqa.training.synthesis import SynthesisConfig, synthesise
from neo4j import Driver

PARTS = ("linking", "classifiers", "simgrag", "frag", "path_scorer", "gsr", "subgraphrag", "route")
NEEDS_TORCH = ("path_scorer", "gsr", "subgraphrag")


@dataclass(frozen=True)
class TrainAllOptions:
    questions: tuple[Path, ...] = ()
    if_missing: bool = False  # keep the parts that are installed already
    parts: tuple[str, ...] = PARTS
    synthesis: SynthesisConfig = field(default_factory=SynthesisConfig)
    link_scorer_questions: int = 3000  # questions whose candidates the link scorer is fitted on, at most
    path_scorer_questions: int = 2000  # training questions the path scorer fine-tunes on at most
    path_scorer_epochs: int = 1
    # of the path scorer's synthesised questions, the share worded to name their answer's kind (twice it
    # for round trips, worded "other ... with the same ..."); 0 keeps the synthesiser's wordings
    kind_share: float = 0.3
    gsr_examples: int = 150_000  # read in all, over as many epochs as the distinct examples allow
    subgraphrag_per_hop: int = 1000  # training questions per hop count
    subgraphrag_epochs: int = 6
    subgraphrag_name: str | None = None  # install SubgraphRAG's scorer by this name instead of as the KG's
    route_questions: int = 150  # per pool of held-out questions
    route_share: float = 0.1  # of the labelled wordings, held out for the route
    validation_share: float = 0.05
    seed: int = 13


@dataclass
class Splits:
    train: list[LabelledQuestion] = field(default_factory=list)
    validation: list[LabelledQuestion] = field(default_factory=list)
    # the path scorer's: on a KG with labelled questions, synthesised ones of the chains nobody labelled too
    scorer_train: list[LabelledQuestion] = field(default_factory=list)
    route: dict[str, list[LabelledQuestion]] = field(default_factory=dict)  # pool name -> questions
    linker_train: list[LabelledQuestion] = field(default_factory=list)
    linker_validation: list[LabelledQuestion] = field(default_factory=list)
    # FRAG's ranker's: synthesised questions of every chain, whatever the labelled ones ask
    ranker_train: list[LabelledQuestion] = field(default_factory=list)
    ranker_validation: list[LabelledQuestion] = field(default_factory=list)


PHRASE_CHECK = 150  # held-out questions that decide whether SimGRAG keeps its learned phrases


def split_labelled(
    questions: Sequence[LabelledQuestion], route_share: float, validation_share: float, seed: int
) -> tuple[list[LabelledQuestion], list[LabelledQuestion], list[LabelledQuestion]]:
    """(train, validation, route) by wording: the questions of one masked wording stay together."""
    groups = sorted({mask_question(q.text, q.topic_spans) for q in questions})
    rng = random.Random(seed)
    rng.shuffle(groups)
    n_route = round(len(groups) * route_share)
    n_validation = round(len(groups) * validation_share)
    route_groups = set(groups[:n_route])
    validation_groups = set(groups[n_route : n_route + n_validation])
    train, validation, route = [], [], []
    for q in questions:
        group = mask_question(q.text, q.topic_spans)
        (route if group in route_groups else validation if group in validation_groups else train).append(q)
    return train, validation, route


def split_synthesised(
    questions: Sequence[LabelledQuestion], validation_share: float, seed: int
) -> tuple[list[LabelledQuestion], list[LabelledQuestion], list[LabelledQuestion]]:
    """(train, validation, route): family B is the route's; family A is split by topic entity."""
    rng = random.Random(seed)
    topics = sorted({q.topic_ids[0] for q in questions if q.wording == "A"})
    held = set(rng.sample(topics, round(len(topics) * validation_share)))
    train = [q for q in questions if q.wording == "A" and q.topic_ids[0] not in held]
    validation = [q for q in questions if q.wording == "A" and q.topic_ids[0] in held]
    route = [q for q in questions if q.wording != "A"]
    return train, validation, route


def part_up_to_date(kg: str, part: str, old: KgProfile | None) -> bool:
    """Whether ``--if-missing`` keeps ``part``: its files and its report are there (files without a report are
    what a training that died left), a path scorer trained on labelled questions has its cosine floor
    (one trained before it learned one would answer every question), and FRAG has its chain vectors (without
    them its questions wait for the encoder)."""
    if not (kg_models.part_installed(kg, part) and old is not None and part in old.parts):
        return False
    if part == "frag" and chain_vectors_stamp(kg_models.part_dir(kg, part)) < 0:
        return False
    return not (part == "path_scorer" and old.labelled and "cosine_floor" not in old.parts[part].metrics)


def scorer_questions(
    labelled: Sequence[LabelledQuestion], synthesised: Sequence[LabelledQuestion], most: int, seed: int
) -> list[LabelledQuestion]:
    """The path scorer's training questions, ``most`` at most: the labelled ones, and synthesised ones of the
    chains nobody labelled for up to half. sgrag ranks with the scorer where its classifier does not know the
    question, which on a labelled KG often asks a chain nobody labelled ("where was the writer of X born"):
    the asked chains alone would teach it few two-step chains (WebQSP asks few). The asked chains are left to
    people's wordings: with synthesised ones of every chain, sgrag on our FB15k-237 tune questions (the KG
    trained with WebQSP) answered 62.7, and 64.1 without those of the asked chains. (MetaQA's scorer ranks its
    templated held-out questions' own chain first for 0.910 of them either way, 0.985 on labelled ones alone;
    sgrag on its free-form tune questions did not fall: 69.0 -> 69.5.)"""
    rng = random.Random(seed)
    asked = {chain_key(q.chain) for q in labelled if q.chain}
    synthesised = [q for q in synthesised if q.chain and chain_key(q.chain) not in asked]
    n_synthesised = min(len(synthesised), max(most // 2, most - len(labelled)))
    n_labelled = min(len(labelled), most - n_synthesised)
    # Every round trip: people ask for "other" films of a film's director often, and the synthesiser walks
    # few of them (47 of FB15k-237's 1,000 two-step chains), so a sample would teach the scorer a handful.
    trips = [q for q in synthesised if is_round_trip(q.chain)][:n_synthesised]
    rest = [q for q in synthesised if not is_round_trip(q.chain)]
    picked = trips + rng.sample(rest, min(len(rest), n_synthesised - len(trips)))
    return rng.sample(list(labelled), n_labelled) + picked


HUB_PERCENTILE = 0.999  # FRAG does not walk through the KG's best-connected thousandth of entities


def worded_as_people_ask(
    read: Arrivals,
    questions: Sequence[LabelledQuestion],
    options: TrainAllOptions,
    log: Callable[[str], None],
) -> list[LabelledQuestion]:
    """The path scorer's training questions with synthesised ones worded as people ask: naming what they ask
    for, and "other ... with the same ..." for a round trip.

    People name the answer's kind ("which countries border Spain"), and a scorer that never saw a kind word
    read "countries" as a second step. The other parts keep the plain wordings: FRAG's ranker fitted on
    kind-naming ones lost 6.5 points on our FB15k-237 tune questions with the KG trained on WebQSP."""
    from kgqa.training.answer_types import arrival_kinds, specific_kinds
    from kgqa.training.synthesis import as_people_ask

    if options.kind_share <= 0:
        return list(questions)
    steps = [q.chain[-1] for q in questions if q.source == SYNTHESISED and q.chain]
    kinds = specific_kinds(arrival_kinds(read, steps))
    worded = as_people_ask(questions, kinds, options.kind_share, options.seed)
    changed = sum(a.text != b.text for a, b in zip(questions, worded, strict=True))
    log(
        f"{changed} of the path scorer's synthesised questions worded as people ask "
        f"({len(kinds)} steps arrive at a kind)"
    )
    return worded


def hub_degree(driver: Driver, kg: str) -> int:
    from kgqa.graph.cypher import render

    records = driver.execute_query(
        render("training/hub_degree"), {"kg": kg, "percentile": HUB_PERCENTILE}, routing_="r"
    ).records
    return max(int(records[0]["degree"] or 0), 1) if records else 1


def _timed(log: Callable[[str], None], what: str) -> Callable[[], float]:
    log(f"{what} ...")
    began = time.perf_counter()
    return lambda: round(time.perf_counter() - began, 1)


def _classifier_chain_accuracy(kg: str, questions: Sequence[LabelledQuestion]) -> float:
    classifiers = registry.question_classifiers(kg)
    asked = [q for q in questions if q.chain]
    if not asked:
        return 0.0
    predicted = classifiers.predict_chains([q.text for q in asked], [list(q.topic_spans) for q in asked])
    return round(sum(p.steps == q.chain for p, q in zip(predicted, asked, strict=True)) / len(asked), 4)


def train_all(
    driver: Driver, kg: str, options: TrainAllOptions, log: Callable[[str], None] = print
) -> KgProfile:
    """Learns and installs every part of ``kg``'s models (see the module's docstring); the profile."""
    loaded = resolve_kg(driver, kg)
    if loaded.status != "complete":
        raise KgNotReady(f"KG {kg!r} is not completely loaded; finish `kgqa load` first")
    unknown = [p for p in options.parts if p not in PARTS]
    if unknown:
        raise BadInput(f"unknown part {unknown[0]!r}; the parts are {', '.join(PARTS)}")
    fingerprint = str(loaded.properties.get("fingerprint", ""))
    old = kg_models.read_profile(kg)

    def installed(part: str) -> bool:
        if part == "route":  # a route that never asked the methods of a part trained since is out of date
            return bool(old and old.route) and not kg_models.parts_newer_than_route(kg, old)
        if part == "subgraphrag" and options.subgraphrag_name:
            return registry.subgraphrag_model_installed(kg, options.subgraphrag_name)
        return part_up_to_date(kg, part, old)

    wanted = [p for p in options.parts if not (options.if_missing and installed(p))]
    skipped = {}
    if set(NEEDS_TORCH) & set(wanted) and importlib.util.find_spec("torch") is None:
        # the product installs without torch (scripts/setup); the parts torch trains wait for it
        skipped = {p: "training needs torch: run scripts/setup train" for p in NEEDS_TORCH}
        wanted = [p for p in wanted if p not in skipped]
        for part, why in skipped.items():
            log(f"{part}: skipped ({why})")
    if options.if_missing and "route" in options.parts and "route" not in wanted and wanted:
        wanted.append("route")  # a part added now gives auto a method its route has never measured
    if "route" in wanted and "classifiers" not in wanted and options.questions and installed("classifiers"):
        # the installed classifiers were refitted on the route's held-out questions after the last route
        # was measured: sgrag would be asked questions its templates learned. Fitted again without them
        # first (seconds), and refitted on all after the route, as a whole training does.
        wanted.append("classifiers")
        log("the classifiers are fitted again without the route's questions first (they learned them)")
    if not wanted:
        log(f"the models of KG {kg!r} asked for are installed already; kept")
        return old or KgProfile(kg, fingerprint, "", [], 0, 0)
    # what is not retrained now stays as it was: its report, and the route measured before
    parts: dict[str, PartReport] = dict(old.parts) if old else {}
    began = time.perf_counter()
    try:
        profile = _train_parts(driver, kg, options, wanted, old, parts, fingerprint, log)
    except BaseException:
        # The parts that finished keep their new reports and the others lose theirs (their files may be
        # half-written), so that `--if-missing` trains again exactly what did not finish.
        kept = {p: r for p, r in parts.items() if p not in wanted or old is None or r is not old.parts.get(p)}
        if old is not None or kept:
            base = old or KgProfile(kg, fingerprint, "", [], 0, 0)
            kg_models.write_profile(replace(base, parts=kept))
        raise
    for part, why in skipped.items():
        if part not in parts:
            parts[part] = PartReport(0.0, notes=[f"not trained: {why}"])
    profile = replace(profile, parts=parts)
    kg_models.write_profile(profile)
    log(f"KG {kg!r}: models installed in {kg_models.kg_models_dir(kg)} ({time.perf_counter() - began:.0f}s)")
    return profile


def _train_parts(
    driver: Driver,
    kg: str,
    options: TrainAllOptions,
    wanted: list[str],
    old: KgProfile | None,
    parts: dict[str, PartReport],
    fingerprint: str,
    log: Callable[[str], None],
) -> KgProfile:
    """Trains the ``wanted`` parts, adding each one's report to ``parts`` as it finishes; the new profile,
    which the caller writes."""

    labelled: list[LabelledQuestion] = []
    sources: list[str] = []
    read_arrivals = Arrivals(driver, kg)  # what each step arrives at: FRAG and the path scorer read it
    if options.questions:
        done = _timed(log, "reading the labelled questions")
        labelled, report = read_labelled_questions(driver, kg, options.questions, progress=log)
        sources = report.files
        parts["questions"] = PartReport(done(), len(labelled), notes=[report.summary()])
        log(report.summary())
    done = _timed(log, "synthesising questions from the KG's relation paths")
    synthesised = synthesise(driver, kg, options.synthesis, embed=embed, progress=log)
    parts["synthesis"] = PartReport(done(), len(synthesised))

    splits = Splits()
    lab_train, lab_validation, lab_route = split_labelled(
        labelled, options.route_share, options.validation_share, options.seed
    )
    syn_train, syn_validation, syn_route = split_synthesised(
        synthesised, options.validation_share, options.seed
    )
    splits.scorer_train = scorer_questions(lab_train, syn_train, options.path_scorer_questions, options.seed)
    splits.linker_train = lab_train + syn_train  # every topic, whatever chain its question asks
    splits.linker_validation = lab_validation or syn_validation
    splits.ranker_train, splits.ranker_validation = syn_train, syn_validation
    if labelled:
        # the KG's own questions say which chains people ask; synthesised questions add wordings of those
        asked = {chain_key(q.chain) for q in labelled if q.chain}
        syn_train = [q for q in syn_train if q.chain and chain_key(q.chain) in asked]
        syn_validation = [q for q in syn_validation if q.chain and chain_key(q.chain) in asked]
    splits.train = lab_train + syn_train
    splits.validation = lab_validation or syn_validation
    # The KG's own questions, when it has any, are what its users ask; questions synthesised from every
    # relation, worded as no model saw, stand for the users who ask of the rest of the KG. Both weigh the
    # same in its route: a route learned on the labelled questions alone sent our FB15k-237 questions to
    # the methods that learned WebQSP's wordings (auto 53.9 on their held-out part, against 65.7 on the KG
    # trained without labels).
    splits.route = {
        name: pool for name, pool in (("labelled", lab_route), ("synthesised", syn_route)) if pool
    }
    log(
        f"{len(splits.train)} training, {len(splits.validation)} validation questions; "
        "held out for the route: " + ", ".join(f"{len(v)} {k}" for k, v in splits.route.items())
    )
    if labelled:
        kg_models.write_held_out(kg, [q.text for q in lab_validation + lab_route])
    relations = sorted(kg_relations(driver, kg))
    # people's wording when the KG has labelled questions
    example = prompt_example(driver, kg, lab_train or splits.train)
    if example is not None:
        kg_models.write_prompt_example(kg, example)
        log(f"the LLM prompt's worked example: {example.question!r}")

    if "linking" in wanted:
        from kgqa.learn.link_scorer import LinkScorerConfig, train_link_scorer
        from kgqa.models.encoder import vocabulary
        from kgqa.training.linking_words import learn_linking_words, save_linking_words

        done = _timed(log, "learning the entity linker's words")
        words = learn_linking_words(driver, kg, splits.train, vocabulary())
        save_linking_words(words, kg_models.part_dir(kg, "linking"))
        notes = [f"{len(words['question_words'])} question words, {len(words['initials'])} initials"]  # type: ignore[arg-type]
        labelled_train = [q for q in splits.linker_train if q.source != SYNTHESISED]
        synthesised_train = [q for q in splits.linker_train if q.source == SYNTHESISED]
        scorer = train_link_scorer(
            driver,
            kg,
            labelled_train,
            synthesised_train,
            splits.linker_validation,
            kg_models.part_dir(kg, "linking"),
            LinkScorerConfig(max_questions=options.link_scorer_questions, seed=options.seed),
            log,
        )
        notes.append(
            f"link scorer fitted on {scorer.questions} questions: "
            + ("kept" if scorer.kept else "not kept: the hand score put a topic first as often or more")
        )
        parts["linking"] = PartReport(done(), int(words["entities"]), scorer.metrics, notes)  # type: ignore[arg-type]
    if "classifiers" in wanted:
        from kgqa.training.question_classifiers import train_question_classifiers

        done = _timed(log, "training the chain and hop classifiers (sgrag's templates)")
        models = train_question_classifiers(
            splits.train, splits.validation, kg_models.part_dir(kg, "classifiers"), seed=options.seed
        )
        validation = models.metadata.get("validation", {})
        parts["classifiers"] = PartReport(
            done(),
            int(models.metadata["training_examples"]),
            {k: round(float(v), 4) for k, v in validation.items() if k.endswith("masked")},
            [f"{models.metadata['chains']} chains (sgrag's templates)"],
        )
    if "simgrag" in wanted:
        from kgqa.training.relation_phrases import learn_relation_phrases, save_relation_phrases

        done = _timed(log, "learning SimGRAG's relation phrases")
        phrases = learn_relation_phrases(splits.train, relations)
        folder = kg_models.part_dir(kg, "simgrag")
        save_relation_phrases(phrases, folder)
        metrics: dict[str, float] = {}
        notes = [f"{len(phrases)} relations"]
        if lab_validation:
            # A paraphrased question set teaches words its users never type: the phrases stay only when
            # SimGRAG answers the KG's own held-out questions better with them than with the names alone.
            from kgqa.learn.route import method_hits

            asked = random.Random(options.seed).sample(lab_validation, min(PHRASE_CHECK, len(lab_validation)))
            metrics["hits1_with_phrases"] = round(method_hits(driver, kg, "simgrag", asked), 4)
            names_only = learn_relation_phrases([], relations)
            save_relation_phrases(names_only, folder)
            metrics["hits1_names_only"] = round(method_hits(driver, kg, "simgrag", asked), 4)
            if metrics["hits1_with_phrases"] > metrics["hits1_names_only"]:
                save_relation_phrases(phrases, folder)
                notes.append(f"phrases kept: better on {len(asked)} held-out questions")
            else:
                notes.append(f"relation names only: phrases did not help on {len(asked)} held-out questions")
            log(notes[-1])
        parts["simgrag"] = PartReport(done(), len(splits.train), metrics, notes)
    if "frag" in wanted:
        from kgqa.models.frag_ranker import FragRanker, save_ranker
        from kgqa.training.answer_types import learn_answer_types
        from kgqa.training.chain_vectors import store_chain_vectors

        done = _timed(log, "learning what each relation arrives at (FRAG's path ranker)")
        steps = [(r, way) for r in relations for way in ("out", "in")]
        kinds = learn_answer_types(read_arrivals, steps, progress=log)
        hub = hub_degree(driver, kg)
        ranker = FragRanker(kinds=kinds, hub_degree=hub)
        save_ranker(kg, ranker)
        notes = [f"hub degree {hub}"]
        stored = store_chain_vectors(
            driver, kg, kg_models.part_dir(kg, "frag"), also=sorted(set(kinds.values())), progress=log
        )
        notes.append(f"{stored} relation chains embedded ahead of the questions")
        metrics: dict[str, float] = {}
        fit_how = ""
        if lab_train and lab_validation:
            from kgqa.learn.frag_ranker import fit_ranker, learn_asked_steps

            ranker = replace(ranker, asked_steps=learn_asked_steps(lab_train))
            save_ranker(kg, ranker)
            notes.append(f"learned the steps that {len(ranker.asked_steps)} kinds of question end with")
            fit = fit_ranker(
                driver,
                kg,
                lab_train,
                lab_validation,
                ranker,
                splits.ranker_train,
                splits.ranker_validation,
                options.seed,
                log,
            )
            metrics = {
                "gold_chain_first_default": fit.accuracy_default,
                "gold_chain_first_fitted": fit.accuracy_fitted,
            }
            for pool, (default, fitted) in fit.pools.items():
                key = pool.replace(" ", "_").replace("-", "_")
                metrics[f"gold_chain_first_{key}_default"] = round(default, 4)
                metrics[f"gold_chain_first_{key}_fitted"] = round(fitted, 4)
            fit_how = fit.how if fit.kept else ""
            if fit.kept:
                save_ranker(
                    kg,
                    replace(
                        ranker,
                        weights=fit.weights,
                        learned_on=f"{fit.questions} questions ({fit.how})",
                    ),
                )
        notes.append(f"weights fitted ({fit_how})" if fit_how else "default weights")
        parts["frag"] = PartReport(done(), len(steps), metrics, notes)
    if "path_scorer" in wanted:
        from kgqa.training.path_scorer import PathScorerConfig, train_path_scorer

        done = _timed(log, "fine-tuning the question-to-path scorer (MiniLM)")
        scorer_train = worded_as_people_ask(read_arrivals, splits.scorer_train, options, log)
        scorer = train_path_scorer(
            driver,
            kg,
            scorer_train,
            splits.validation,
            kg_models.part_dir(kg, "path_scorer"),
            PathScorerConfig(
                epochs=options.path_scorer_epochs,
                max_questions=options.path_scorer_questions,
                # the floor is learned on people's questions only: a KG's synthesised ones score their own
                # chains far higher (FB15k-237: floor 0.44, and sgrag on our tune questions fell 54.9 -> 43.8)
                floor_share=PathScorerConfig.floor_share if labelled else None,
                seed=options.seed,
            ),
            log,
        )
        notes = [f"trained on {scorer.device}"]
        metrics = dict(scorer.metrics)
        ranks = True  # without labelled questions: the classifier only knows the synthesised wordings
        if labelled and kg_models.part_installed(kg, "classifiers"):
            # The KG's own held-out questions decide whether sgrag ranks its chains with the scorer or keeps
            # its chain classifier; synthesised questions never do (the classifier learned their very words).
            classifier = _classifier_chain_accuracy(kg, splits.validation[: scorer.validation])
            metrics["classifier_chain_accuracy_held_out"] = classifier
            ranks = metrics["chain_at_1_held_out"] >= classifier
        set_ranks_sgrag(kg_models.part_dir(kg, "path_scorer"), ranks)
        notes.append(
            "sgrag ranks chains with it" if ranks else "sgrag keeps its classifier, which did better"
        )
        parts["path_scorer"] = PartReport(done(), scorer.examples, metrics, notes)
    if "gsr" in wanted:
        from kgqa.training.gsr import GsrConfig, train_gsr

        done = _timed(log, "training GSR's chain generator")
        gsr = train_gsr(
            relations,
            kg_models.part_dir(kg, "gsr"),
            splits.train,
            splits.validation,
            GsrConfig(examples=options.gsr_examples, seed=options.seed),
            log,
        )
        parts["gsr"] = PartReport(
            done(), gsr.examples, {"chain_accuracy_held_out_wordings": round(gsr.valid_chain_accuracy, 4)}
        )
    if "subgraphrag" in wanted:
        from kgqa.training.subgraphrag.config import TrainConfig
        from kgqa.training.subgraphrag.pipeline import train_subgraphrag

        done = _timed(log, "training SubgraphRAG's triple scorer")
        result = train_subgraphrag(
            driver,
            TrainConfig(
                kg=kg,
                limit=options.subgraphrag_per_hop,
                epochs=options.subgraphrag_epochs,
                seed=options.seed,
            ),
            splits.train,
            splits.validation,
            registry.subgraphrag_model_dir(kg, options.subgraphrag_name),
            log=log,
        )
        parts[
            "subgraphrag" if not options.subgraphrag_name else f"subgraphrag {options.subgraphrag_name}"
        ] = PartReport(
            done(),
            int(result.meta["split"]["train"]),
            {"recall@100": float(result.meta["best_dev_recall@100"])},
        )
    registry.forget_loaded_models()

    profile = KgProfile(
        kg=kg,
        fingerprint=fingerprint,
        trained_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        questions=sources,
        labelled=len(labelled),
        synthesised=len(synthesised),
        parts=parts,
        methods=dict(old.methods) if old and "route" not in wanted else {},
        route=dict(old.route) if old and "route" not in wanted else {},
        route_parts=old.route_parts if old and "route" not in wanted else None,
    )
    if "route" in wanted and splits.route:
        done = _timed(log, "measuring every method on the held-out questions (auto's route)")
        pools = sample_route_questions(splits.route, options.route_questions, options.seed)
        # Without labelled questions, the methods that read no wording are planned first: the others learned
        # the very sentences the synthesised questions are made of and score far higher on them than on
        # people's (GSR: 0.74 on held-out synthesised FB15k-237 questions, 0.22 on our written ones).
        first = WORDING_FREE if "labelled" not in pools else ()
        measured = measure_route(driver, kg, pools, AUTO_CANDIDATES, log, first=first)
        profile.route = policy_to_json(measured.policy)
        scorer_metrics: dict[str, float] = {}
        if measured.answer_scorer is not None:
            profile.route[ANSWER_SCORER] = measured.answer_scorer.to_json()
            scorer_metrics = {f"answer_scorer_{k}": v for k, v in measured.answer_scorer.metrics.items()}
            scorer_metrics["answer_scorer_reorders"] = float(measured.answer_scorer.reorder)
        profile.route_parts = kg_models.installed_parts(kg)
        profile.methods = measured.methods
        parts["route"] = PartReport(
            done(),
            sum(measured.questions.values()),
            {**{f"auto_{k}": v for k, v in measured.scores.items()}, **scorer_metrics},
            [f"{m} cannot run: {why}" for m, why in measured.unavailable.items()],
        )
    if "classifiers" in wanted and lab_route:
        # The route is measured: the held-out wordings now teach the classifiers too (seconds), so that no
        # wording of the KG's own questions is left out of sgrag's templates.
        from kgqa.training.question_classifiers import train_question_classifiers

        done = _timed(log, "refitting the classifiers on every labelled question")
        models = train_question_classifiers(
            [*splits.train, *lab_route],
            splits.validation,
            kg_models.part_dir(kg, "classifiers"),
            seed=options.seed,
        )
        chains = models.metadata["chains"]
        parts["classifiers"].notes.append(
            f"refitted on the route's wordings too ({done()}s, {chains} chains)"
        )
        registry.forget_loaded_models()
    return profile
