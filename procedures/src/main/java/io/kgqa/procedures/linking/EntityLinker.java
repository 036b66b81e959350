package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * Finds the topic entities of a question inside the database, scoped to one KG. The one linker of kgqa:
 * {@code kgqa.link.entities} streams its result and every retriever starts from it through {@link TopicEntities}.
 *
 * <ol>
 *   <li>{@code [brackets]} (MetaQA style) are honoured: the bracketed text is looked up by exact name, then by
 *       id; only when both fail is it linked like free text (its best entity kept).</li>
 *   <li>Free text is cut into word n-grams (spans of up to {@value #MAX_SPAN_TOKENS} tokens, {@link LinkText}).
 *       Three sources propose entities ({@link IndexCandidates}): <b>exact</b> (every span in a few case
 *       variants, without a final possessive, and a final plural as its singular, on the {@code (kg, name)}
 *       range index); <b>full-text + fuzzy</b> (one Lucene query over the question's words,
 *       {@link FulltextQuery}; each hit aligned back onto a span with a bounded edit distance, or onto one word
 *       that matches the last word of a person's name: "Herzog", {@link HitAlignment}); <b>vector</b> (only
 *       when nothing else scores {@value #MIN_SCORE}: {@link VectorFallback}).</li>
 *   <li>Each (entity, span) candidate is scored ({@link LinkScoring}: exact over fuzzy, longer over shorter,
 *       content words over question words, capitalised spans when the question has capitals) and overlapping
 *       spans are resolved greedily, best first ({@link SpanResolver}). {@code maxEntities} counts spans:
 *       entities of one name on one span (a tag and a person) share a place. A further span must score
 *       {@link #SECONDARY_RATIO} of the best, unless it is a number, a shared value (a genre) or a name typed
 *       with its capitals (in a question typed without any, a name of two or more words spelt closely). The words a leading "what" or "which" asks for ("what airport in paris") go behind
 *       the other links, still linked ({@link LinkScoring#askedKindLast}); a role said of the name right
 *       beside it ("the cinematographer of X", "X's composer") is not linked
 *       ({@link LinkScoring#withoutRoleOfName}).</li>
 * </ol>
 *
 * <p>Every user string reaches the database as a parameter; the Lucene query is built from escaped words.
 *
 * <p>{@link #named} resolves names or ids given by the caller ({@code config.topicEntities}).
 */
public final class EntityLinker {

    public static final int MAX_SPAN_TOKENS = 12;
    /** A candidate below this is not returned at all. */
    public static final double MIN_SCORE = LinkScoring.MIN_SCORE;
    /** Further entities must score at least this fraction of the best one. */
    public static final double SECONDARY_RATIO = LinkScoring.SECONDARY_RATIO;

    private static final Label RELATION = Label.label("Relation");

    private final Transaction tx;
    private final String kg;
    private final Log log;
    private final IndexCandidates index;
    private Set<String> stopWords;
    private Set<String> questionStems = Set.of();
    private LinkingWords learned;

    /**
     * One linked entity, best first in {@link #link}'s result.
     *
     * @param alternatives the other entities the same words may name (candidates on the very same span that
     *     were not linked), best first: a method whose question leads nowhere from this one may try them
     */
    public record Link(Node node, String id, String name, double score, String how, String span,
                       List<Link> alternatives) {

        Link(Node node, String id, String name, double score, String how, String span) {
            this(node, id, name, score, how, span, List.of());
        }
    }

    /** @param log where the one-time warnings go; may be null */
    public EntityLinker(Transaction tx, String kg, Log log) {
        this.tx = Objects.requireNonNull(tx, "tx");
        this.kg = Objects.requireNonNull(kg, "kg");
        this.log = log;
        this.index = new IndexCandidates(tx, kg);
    }

    /** The topic entities of {@code question}, best first; empty when none is found. */
    public List<Link> link(String question, int maxEntities) {
        return link(question, maxEntities, SECONDARY_RATIO);
    }

    /**
     * @param secondaryRatio a second entity is kept only when it scores at least this share of the best one
     *     (0: every entity above {@link #MIN_SCORE} that does not overlap a better one, as a claim needs)
     */
    public List<Link> link(String question, int maxEntities, double secondaryRatio) {
        if (maxEntities <= 0 || LinkText.strip(question).isEmpty()) {
            return List.of();
        }
        List<String> bracketed = QuestionText.bracketed(question);
        if (!bracketed.isEmpty()) {
            return brackets(bracketed, maxEntities, secondaryRatio);
        }
        return free(question, maxEntities, secondaryRatio);
    }

    private List<Link> brackets(List<String> names, int maxEntities, double secondaryRatio) {
        List<Link> found = new ArrayList<>();
        for (String text : names) {
            // of several entities of one name, the last the index yields: bracketed questions link as they did
            Node node = index.last("name", text);
            if (node == null) {
                node = index.last("id", text);
            }
            if (node != null) {
                found.add(new Link(node, IndexCandidates.idOf(node), IndexCandidates.nameOf(node), 1.0, "bracket",
                        text));
            } else { // a bracket with a typo or other casing: its text alone, linked as free text, the best kept
                found.addAll(free(text, 1, secondaryRatio));
            }
        }
        List<Link> unique = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Link link : found) {
            if (seen.add(link.id()) && unique.size() < maxEntities) {
                unique.add(link);
            }
        }
        return unique;
    }

    private List<Link> free(String question, int maxEntities, double secondaryRatio) {
        Scored scored = scored(question);
        if (scored == null) {
            return List.of();
        }
        return SpanResolver.resolve(scored.candidates(), scored.tokens(), maxEntities, secondaryRatio,
                scored.floor());
    }

    /** Every candidate of a question, scored, before resolution; {@code floor}: the learned scorer's, or NaN. */
    private record Scored(List<Token> tokens, List<Candidate> candidates, double floor) {
    }

    /** One (entity, span) candidate as {@code kgqa.link.candidates} streams it. */
    public record CandidateRow(String id, String name, String span, int start, int end, String how,
                               double handScore, double score, boolean learned, Map<String, Double> features) {
    }

    /**
     * Every (entity, span) candidate of a free-text question with its hand score, its learned score (the hand
     * score when the KG has no link scorer) and the features the learned scorer reads; best first. What
     * {@code kgqa train all} fits the scorer on, and what {@code kgqa link} shows.
     */
    public List<CandidateRow> candidates(String question) {
        Scored scored = LinkText.strip(question).isEmpty() ? null : scored(question);
        if (scored == null) {
            return List.of();
        }
        boolean learned = !Double.isNaN(scored.floor());
        if (!learned) {
            LinkFeatures.set(scored.candidates(), scored.tokens(), LinkText.hasCase(scored.tokens(), question));
        }
        List<CandidateRow> rows = new ArrayList<>();
        for (Candidate c : scored.candidates()) {
            Map<String, Double> features = new LinkedHashMap<>();
            for (int i = 0; i < LinkFeatures.NAMES.size(); i++) {
                features.put(LinkFeatures.NAMES.get(i), c.features[i]);
            }
            rows.add(new CandidateRow(c.id, c.name, LinkText.stripPunct(LinkText.join(scored.tokens(), c.start, c.end)),
                    c.start, c.end, c.how, c.thresholdScore(), c.score, learned, features));
        }
        rows.sort((a, b) -> Double.compare(b.score(), a.score()));
        return rows;
    }

    private Scored scored(String question) {
        List<Token> tokens = LinkText.tokens(question);
        if (tokens.isEmpty()) {
            return null;
        }
        boolean[] content = LinkText.content(tokens, stopWords(), questionStems);
        boolean hasCase = LinkText.hasCase(tokens, question);

        // Found order (exact, full text, initials, vector; spans left to right) decides the ties that survive
        // every key of SpanResolver's stable sort.
        Map<List<Object>, Candidate> candidates = new LinkedHashMap<>();
        for (Candidate c : index.exact(tokens, hasCase)) {
            add(candidates, c);
        }
        String query = FulltextQuery.of(tokens, content, learned()::commonInEnglish);
        if (!query.isEmpty()) {
            for (Candidate c : HitAlignment.align(index.fulltextHits(query), tokens, learned()::commonInNames,
                    learned()::commonInEnglish)) {
                add(candidates, c);
            }
        }
        HitAlignment.dropPartsThatAreNames(candidates.values());
        HitAlignment.pluralsNameTheirHolders(candidates);
        for (Candidate c : index.initials(tokens, content, hasCase, learned())) {
            add(candidates, c);
        }
        for (Candidate c : index.derived(tokens, content)) {
            add(candidates, c);
        }
        Set<String> cues = LinkText.stems(tokens.stream().map(Token::norm).toList());
        double best = 0;
        for (Candidate c : candidates.values()) {
            best = Math.max(best, LinkScoring.score(c, tokens, content, hasCase, cues));
        }
        if (best < MIN_SCORE) {
            for (Candidate c : new VectorFallback(tx, kg, log).candidates(tokens, content)) {
                add(candidates, c);
            }
            for (Candidate c : candidates.values()) {
                LinkScoring.score(c, tokens, content, hasCase, cues);
            }
        }
        boolean[] ordinary = new boolean[tokens.size()];
        boolean[] squeezedCommon = new boolean[tokens.size()];
        for (int k = 0; k < tokens.size(); k++) {
            // a year right after a word ("governor of indiana 2012") says when; after "in" or "from" it is
            // as often the topic ("movies released in 1954": the KG's year)
            ordinary[k] = LinkText.typedCommon(tokens.get(k), learned()::commonInEnglish)
                    || (LinkText.typedYear(tokens.get(k)) && k > 0 && content[k - 1]);
            squeezedCommon[k] = LinkText.typedCommonSqueezed(tokens.get(k), learned()::commonInEnglish);
        }
        LinkScoring.yieldToNames(candidates.values(), ordinary, squeezedCommon, tokens);
        TitledNames.apply(candidates.values());
        List<Candidate> all = new ArrayList<>(candidates.values());
        LinkScorer scorer = LinkScorer.of(kg);
        if (scorer == null) {
            return new Scored(tokens, all, Double.NaN);
        }
        LinkFeatures.set(all, tokens, hasCase);
        for (Candidate c : all) {
            c.handScore = c.score;
            c.score = scorer.probability(c.features);
        }
        return new Scored(tokens, all, scorer.floor());
    }

    /** Keeps the better match per (entity, span); a replaced candidate keeps its place in the found order. */
    private static void add(Map<List<Object>, Candidate> candidates, Candidate c) {
        List<Object> key = List.of(c.id, c.start, c.end);
        Candidate old = candidates.get(key);
        if (old == null || c.match > old.match) {
            candidates.put(key, c);
        }
    }

    /**
     * The stop words, the words of this KG's relation names ("directed_by" -> "directed") and the words its
     * questions ask with ({@link LinkingWords}).
     */
    private Set<String> stopWords() {
        if (stopWords == null) {
            Set<String> words = new HashSet<>(LinkText.STOPWORDS);
            words.addAll(learned().questionWords());
            questionStems = new HashSet<>();
            for (String w : learned().questionWords()) {
                questionStems.add(LinkingWords.stem(w));
            }
            try (ResourceIterator<Node> relations = tx.findNodes(RELATION, "kg", kg)) {
                while (relations.hasNext()) {
                    if (relations.next().getProperty("name", null) instanceof String name) {
                        words.addAll(LinkText.relationNameWords(name));
                    }
                }
            }
            stopWords = words;
        }
        return stopWords;
    }

    private LinkingWords learned() {
        if (learned == null) {
            learned = LinkingWords.of(kg);
        }
        return learned;
    }

    // -------------------------------------------------------------------------------------- explicit names

    /**
     * The entities a caller means by {@code text} ({@code config.topicEntities}, see {@link TopicEntities}): the
     * entity with that id, else those of that exact name, else those whose name equals it up to case, accents
     * and punctuation (through the full-text index); empty when none.
     */
    public List<Node> named(String text) {
        List<Node> byId = index.find("id", text, 1);
        if (!byId.isEmpty()) {
            return byId;
        }
        List<Node> byName = index.find("name", text, IndexCandidates.MAX_PER_NAME);
        if (!byName.isEmpty()) {
            return byName;
        }
        return index.fulltextEqual(IndexCandidates.words(text));
    }
}
