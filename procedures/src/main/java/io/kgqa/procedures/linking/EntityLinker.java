package io.kgqa.procedures.linking;

import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.TextEncoder;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Vectors;
import io.kgqa.procedures.util.BadArgumentException;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * Finds the topic entities of a question inside the database, scoped to one KG. The one linker of kgqa:
 * {@code kgqa.link.entities} streams its result and {@code kgqa.subgraphrag.retrieve} starts from it.
 *
 * <ol>
 *   <li>{@code [brackets]} (MetaQA style) are honoured: the bracketed text is looked up by exact name, then by
 *       id; only when both fail is it linked like free text (its best entity kept).</li>
 *   <li>Free text is cut into word n-grams (spans of up to {@value #MAX_SPAN_TOKENS} tokens). Three sources
 *       propose entities: <b>exact</b> (every span in a few case variants, without a final possessive, and a
 *       final plural as its singular, on the {@code (kg, name)} range index); <b>full-text + fuzzy</b> (one
 *       Lucene query over the question's words, {@code word~1} for longer content words; each hit aligned back
 *       onto a span with a bounded edit distance in which a swap of two letters is one edit, or onto one word
 *       that matches the last word of a person's name: "Herzog"); <b>vector</b> (only when nothing else
 *       scores {@value #MIN_SCORE}: content spans embedded in the database and looked up in
 *       {@code entity_embedding}; only near-identical names count).</li>
 *   <li>Each (entity, span) candidate is scored (exact over fuzzy, longer over shorter, content words over
 *       question words, capitalised spans when the question has capitals) and overlapping spans are resolved
 *       greedily, best first. {@code maxEntities} counts spans: entities of one name on one span (a tag and
 *       a person) share a place. A further span must score {@link #SECONDARY_RATIO} of the best, unless it
 *       is a number, a shared value (a genre) or a name typed with its capitals.</li>
 * </ol>
 *
 * <p>This is a port of {@code retrieve/linking.py} that gives the same entities, spans and scores: its
 * constants, word lists, candidate order and tie-breaks are kept on purpose, including where Python's
 * dict insertion order decides a tie. Where that file issued Cypher, this class uses the Core API; the
 * Lucene query is built from escaped words and, like every user string, passed as a parameter.
 *
 * <p>{@link #resolveExplicit} resolves names or ids given by the caller ({@code config.topicEntities}).
 */
public final class EntityLinker {

    public static final int MAX_SPAN_TOKENS = 12;
    /**
     * Terms of the one full-text query, the first words of the question first: Lucene refuses a query of more
     * than 1,024 clauses (a fuzzy term expands to several), and a name is found by its own words anyway.
     */
    public static final int MAX_QUERY_TERMS = 64;
    /** Full-text hits fetched (all KGs share the index) ... */
    public static final int FULLTEXT_FETCH = 200;
    /** ... and kept for this KG. */
    public static final int FULLTEXT_KEEP = 80;
    public static final int VECTOR_K = 25;
    /** Below this a vector neighbour is a guess, not a link. */
    public static final double VECTOR_MIN_COSINE = 0.9;
    /** A candidate below this is not returned at all. */
    public static final double MIN_SCORE = 0.30;
    /** An entity with the very same name as a chosen one, on the same span, within this ratio, stands too. */
    public static final double TWIN_RATIO = 0.95;
    /** Further entities must score at least this fraction of the best one. */
    public static final double SECONDARY_RATIO = 0.75;
    /** Entities that share one span of the question ("ringo lam" the tag, "Ringo Lam" the person), at most. */
    public static final int MAX_TWINS = 3;
    /**
     * An entity this many facts touch is a value many entities share (a genre, a language, a country): said
     * exactly, it states a constraint ("horror films by X"), however short its name.
     */
    public static final int SHARED_VALUE_DEGREE = 100;
    /** A plural said for a singular name ("westerns" for "Western"): a little below an exact match. */
    static final double SINGULAR_MATCH = 0.93;
    /** A person named by the last word of their name ("Herzog" for "Werner Herzog"): below any full name. */
    static final double PARTIAL_MATCH = 0.8;
    /** A name said without the words many of the KG's names share ("Microsoft" for "Microsoft Corporation"). */
    static final double HEAD_MATCH = 0.9;
    /** A name typed as its initials ("USA"). */
    static final double INITIALS_MATCH = 0.9;

    /**
     * Function words and the generic vocabulary of questions in English: a span made only of these is rarely
     * the entity meant. What a KG's own questions ask with ("films", "born", "capital") is learned per KG
     * ({@link LinkingWords}), and the words of the KG's relation names are added too. The verbs users ask with
     * ("who made X", "I want ...") are here: an entity named "Made" is meant only when typed as a name.
     */
    static final Set<String> STOPWORDS = Set.copyOf(Arrays.asList("""
            a about above after again against all also am an and any are as at be because been before being below
            between both but by can could did do does doing done down during each few for from further had has have
            having he her here hers herself him himself his how i if in into is it its itself just me more most my
            myself no nor not of off on once only or other our ours out over own same she should so some such than
            that the their theirs them themselves then there these they this those through to too under until up
            very was we were what when where which while who whom whose why will with would you your yours
            s t d ll m re ve
            person people someone somebody thing things kind kinds type types sort sorts name names named called
            year years date dates share shared sharing together
            tell give list find know say said show shown many much often make makes made making want wants
            was were be been being is are
            """.trim().split("\\s+")));

    /** Words a title leaves in lower case ("What's in a Name?", "Lord of the Rings"). */
    static final Set<String> MINOR = Set.of(
            "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "nor", "but", "by", "with", "from",
            "as", "into");

    static final String OUTER_PUNCT = "\"'\u201c\u201d\u2018\u2019`([{<)]}>,.;:!?";

    /** Entities kept per explicit name: several entities may share one name (e.g. Freebase). */
    static final int MAX_PER_NAME = 5;
    private static final int EXPLICIT_FULLTEXT_LIMIT = 50;

    private static final Label ENTITY = Label.label("Entity");
    private static final Label RELATION = Label.label("Relation");
    private static final Pattern RELATION_SEPARATORS = Pattern.compile("[._/]+");
    private static final Pattern RELATION_SEPARATOR = Pattern.compile("[._/]");
    private static final Pattern LUCENE_SPECIAL = Pattern.compile("[+\\-!(){}\\[\\]^\"~*?:\\\\/&|]");
    /** A word as Lucene's standard analyzer keeps it: letters/digits, inner apostrophes allowed ("schindler's"). */
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}\\p{M}]+(?:['\u2019][\\p{L}\\p{N}\\p{M}]+)*");
    private static final String FULLTEXT_QUERY = "CALL db.index.fulltext.queryNodes('entity_name', $query, {limit: $limit})"
            + " YIELD node, score RETURN node, score";
    private static final String VECTOR_QUERY = "CALL db.index.vector.queryNodes('entity_embedding', $k, $vector)"
            + " YIELD node, score RETURN node, score";
    private static final String VECTOR_INDEX = "entity_embedding";

    /**
     * Why the vector fallback was skipped, per models directory and reason: the deliberate thread-safe memory
     * that makes the warning appear once per server rather than once per question.
     */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private final Transaction tx;
    private final String kg;
    private final Log log;
    private Set<String> stopWords;
    private Set<String> questionStems = Set.of();
    private LinkingWords learned;
    private double secondaryRatio = SECONDARY_RATIO;

    /** One linked entity, best first in {@link #link}'s result. */
    public record Link(Node node, String id, String name, double score, String how, String span) {
    }

    /** A whitespace-separated token of the question: as typed, and normalised ("" for pure punctuation). */
    record Token(String text, String norm) {
    }

    /** A span of the question that a lookup string came from; {@code exactCase}: the string is the span as typed. */
    record SpanRef(int start, int end, boolean exactCase, boolean singular) {
    }

    /** An (entity, span) pair; {@code score} is set by {@link #score}. */
    static final class Candidate {
        final Node node;
        final String id;
        final String name;
        final int start; // token index, inclusive
        final int end; // token index, exclusive
        final String how;
        final double match; // quality of the string match, in [0, 1]
        final int degree; // breaks ties between equally good names
        final List<String> types; // relationship types of the entity
        double score;
        boolean capitalised; // every judged word of the span capitalised, in a question with case (set by score)

        Candidate(Node node, String id, String name, int start, int end, String how, double match, int degree,
                  List<String> types) {
            this.node = node;
            this.id = id;
            this.name = name;
            this.start = start;
            this.end = end;
            this.how = how;
            this.match = match;
            this.degree = degree;
            this.types = types;
        }

        @Override
        public String toString() {
            return name + "[" + start + "," + end + ")" + how + " match=" + match + " score=" + score;
        }
    }

    /** A full-text hit of this KG, best first. */
    record Hit(Node node, String id, String name, int degree, List<String> types) {
    }

    /** @param log where the one-time warnings go; may be null */
    public EntityLinker(Transaction tx, String kg, Log log) {
        this.tx = Objects.requireNonNull(tx, "tx");
        this.kg = Objects.requireNonNull(kg, "kg");
        this.log = log;
    }

    // ------------------------------------------------------------------------------------------ linking

    /** The topic entities of {@code question}, best first; empty when none is found. */
    public List<Link> link(String question, int maxEntities) {
        return link(question, maxEntities, SECONDARY_RATIO);
    }

    /**
     * @param secondaryRatio a second entity is kept only when it scores at least this share of the best one
     *     (0: every entity above {@link #MIN_SCORE} that does not overlap a better one, as a claim needs)
     */
    public List<Link> link(String question, int maxEntities, double secondaryRatio) {
        this.secondaryRatio = secondaryRatio;
        if (maxEntities <= 0 || PyText.strip(question).isEmpty()) {
            return List.of();
        }
        List<String> bracketed = QuestionText.bracketed(question);
        if (!bracketed.isEmpty()) {
            return brackets(bracketed, maxEntities);
        }
        return free(question, maxEntities);
    }

    private List<Link> brackets(List<String> names, int maxEntities) {
        List<Link> found = new ArrayList<>();
        for (String text : names) {
            // linking.py keeps the last row per text (a dict built from the rows); so does this
            Node node = last("name", text);
            if (node == null) {
                node = last("id", text);
            }
            if (node != null) {
                found.add(new Link(node, idOf(node), nameOf(node), 1.0, "bracket", text));
            } else { // a bracket with a typo or other casing: its text alone, linked as free text, the best kept
                found.addAll(free(text, 1));
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

    private List<Link> free(String question, int maxEntities) {
        List<Token> tokens = tokens(question);
        if (tokens.isEmpty()) {
            return List.of();
        }
        boolean[] content = content(tokens, stopWords(), questionStems);
        boolean hasCase = hasCase(tokens, question);

        // Insertion order decides exact ties in resolve (a stable sort), as Python's dict order does there.
        Map<List<Object>, Candidate> candidates = new LinkedHashMap<>();
        for (Map.Entry<String, List<SpanRef>> lookup : exactLookups(tokens).entrySet()) {
            try (ResourceIterator<Node> nodes = tx.findNodes(ENTITY, "kg", kg, "name", lookup.getKey())) {
                while (nodes.hasNext()) {
                    Node node = nodes.next();
                    String id = idOf(node);
                    String name = nameOf(node);
                    int degree = node.getDegree();
                    List<String> types = typesOf(node);
                    for (SpanRef span : lookup.getValue()) {
                        // without any capitals in the question, "ringo lam" (a tag) and "Ringo Lam" (a person)
                        // are nearly equally exact: both are kept (see resolve), the one typed as is first
                        double quality = span.singular() ? SINGULAR_MATCH : span.exactCase() ? 1.0 : !hasCase ? 0.99 : 0.96;
                        add(candidates, new Candidate(node, id, name, span.start(), span.end(),
                                span.singular() ? "singular" : "exact", quality, degree, types));
                    }
                }
            }
        }
        String query = luceneQuery(tokens, content);
        if (!query.isEmpty()) {
            for (Candidate c : align(fulltextHits(query), tokens, learned()::commonInNames,
                    learned()::commonInEnglish)) {
                add(candidates, c);
            }
        }
        for (Candidate c : initials(tokens, content, hasCase)) {
            add(candidates, c);
        }
        Set<String> cues = stems(tokens.stream().map(Token::norm).toList());
        double best = 0;
        for (Candidate c : candidates.values()) {
            best = Math.max(best, score(c, tokens, content, hasCase, cues));
        }
        if (best < MIN_SCORE) {
            for (Candidate c : vector(tokens, content)) {
                add(candidates, c);
            }
            for (Candidate c : candidates.values()) {
                score(c, tokens, content, hasCase, cues);
            }
        }
        return resolve(new ArrayList<>(candidates.values()), tokens, maxEntities, secondaryRatio);
    }

    /** Keeps the better match per (entity, span); a replaced candidate keeps its place, as in a Python dict. */
    private static void add(Map<List<Object>, Candidate> candidates, Candidate c) {
        List<Object> key = List.of(c.id, c.start, c.end);
        Candidate old = candidates.get(key);
        if (old == null || c.match > old.match) {
            candidates.put(key, c);
        }
    }

    /** Entities of this KG whose name is {@code query}'s hit, best first, at most {@value #FULLTEXT_KEEP}. */
    private List<Hit> fulltextHits(String query) {
        List<Hit> hits = new ArrayList<>();
        try (Result result = tx.execute(FULLTEXT_QUERY, Map.of("query", query, "limit", (long) FULLTEXT_FETCH))) {
            while (result.hasNext() && hits.size() < FULLTEXT_KEEP) {
                Node node = (Node) result.next().get("node");
                if (kg.equals(node.getProperty("kg", null))) {
                    hits.add(new Hit(node, idOf(node), nameOf(node), node.getDegree(), typesOf(node)));
                }
            }
        }
        return hits;
    }

    /**
     * The stop words, the words of this KG's relation names ("directed_by" -> "directed") and the words its
     * questions ask with ({@link LinkingWords}).
     */
    private Set<String> stopWords() {
        if (stopWords == null) {
            Set<String> words = new HashSet<>(STOPWORDS);
            words.addAll(learned().questionWords());
            questionStems = new HashSet<>();
            for (String w : learned().questionWords()) {
                questionStems.add(LinkingWords.stem(w));
            }
            try (ResourceIterator<Node> relations = tx.findNodes(RELATION, "kg", kg)) {
                while (relations.hasNext()) {
                    if (relations.next().getProperty("name", null) instanceof String name) {
                        words.addAll(relationNameWords(name));
                    }
                }
            }
            stopWords = words;
        }
        return stopWords;
    }

    /** The words of one relation name longer than two letters and not numbers: "film.film.directed_by" -> film, directed. */
    static Set<String> relationNameWords(String name) {
        Set<String> words = new LinkedHashSet<>();
        for (String w : PyText.split(normalize(RELATION_SEPARATOR.matcher(name).replaceAll(" ")))) {
            if (PyText.length(w) > 2 && !PyText.isDigits(w)) {
                words.add(w);
            }
        }
        return words;
    }

    private LinkingWords learned() {
        if (learned == null) {
            learned = LinkingWords.of(kg);
        }
        return learned;
    }

    // ------------------------------------------------------------------------------------ vector fallback

    /** Entities whose embedded name is all but identical to a content span's embedding. */
    private List<Candidate> vector(List<Token> tokens, boolean[] content) {
        // Maximal runs of content words and their sub-spans up to 4 words: the names the user may mean.
        Map<String, int[]> spans = new LinkedHashMap<>();
        int i = 0;
        while (i < tokens.size()) {
            if (!content[i]) {
                i++;
                continue;
            }
            int j = i;
            while (j < tokens.size() && content[j]) {
                j++;
            }
            for (int a = i; a < j; a++) {
                for (int b = a + 1; b <= Math.min(j, a + 4); b++) {
                    spans.putIfAbsent(PyText.strip(join(tokens, a, b), OUTER_PUNCT), new int[] {a, b});
                }
            }
            i = j;
        }
        spans.remove("");
        if (spans.isEmpty() || !vectorAvailable()) {
            return List.of();
        }
        record Neighbour(int[] span, Node node, double score) {
        }
        List<Neighbour> neighbours = new ArrayList<>();
        try (ModelCache.Lease<TextEncoder> encoder = TextEncoder.acquire(encoderName())) {
            for (Map.Entry<String, int[]> span : spans.entrySet()) {
                float[] embedded = encoder.get().embed(span.getKey());
                if (Vectors.isZero(embedded)) {
                    continue; // the static encoder knows none of the span's tokens: nothing to search with
                }
                List<Double> vector = new ArrayList<>();
                for (float x : embedded) {
                    vector.add((double) x);
                }
                try (Result result = tx.execute(VECTOR_QUERY, Map.of("k", (long) VECTOR_K, "vector", vector))) {
                    while (result.hasNext()) {
                        Map<String, Object> row = result.next();
                        Node node = (Node) row.get("node");
                        if (kg.equals(node.getProperty("kg", null))) {
                            neighbours.add(new Neighbour(span.getValue(), node, ((Number) row.get("score")).doubleValue()));
                        }
                    }
                }
            }
        }
        // linking.py asks for all spans at once, ORDER BY score DESC; a stable sort keeps span order in ties
        neighbours.sort((x, y) -> Double.compare(y.score(), x.score()));
        List<Candidate> out = new ArrayList<>();
        for (Neighbour n : neighbours) {
            double similarity = 2 * n.score() - 1; // the index reports (1 + cos) / 2
            if (similarity < VECTOR_MIN_COSINE) {
                continue;
            }
            // as in linking.py, a vector candidate carries neither degree nor relationship types
            out.add(new Candidate(n.node(), idOf(n.node()), nameOf(n.node()), n.span()[0], n.span()[1], "vector",
                    0.75 * similarity, 0, List.of()));
        }
        return out;
    }

    /** The encoder the KG's entity names were embedded with: the span must be embedded the same way. */
    private String encoderName() {
        return KnowledgeGraphs.embeddingModel(tx, kg, TextEncoder.DEFAULT_NAME);
    }

    /**
     * Whether the fallback can run: a server without the exported encoder, ONNX Runtime or the vector index
     * still links by name, with a warning (once) instead of an error.
     */
    private boolean vectorAvailable() {
        String problem = null;
        try {
            Onnx.requireRuntime();
            TextEncoder.requireFiles(encoderName());
        } catch (IllegalArgumentException | IllegalStateException e) {
            problem = e.getMessage();
        }
        if (problem == null) {
            boolean indexed = false;
            for (var index : tx.schema().getIndexes(ENTITY)) {
                indexed |= VECTOR_INDEX.equals(index.getName());
            }
            if (!indexed) {
                problem = "there is no vector index '" + VECTOR_INDEX + "' (run `kgqa load` with embeddings)";
            }
        }
        if (problem == null) {
            return true;
        }
        if (log != null && WARNED.add(ModelsDir.root() + "|" + problem)) {
            log.warn("kgqa entity linking: no vector fallback for names that neither match exactly nor"
                    + " fuzzily: " + problem);
        }
        return false;
    }

    // -------------------------------------------------------------------------------------- explicit names

    /**
     * Resolves names or ids given by the caller: exact id, exact name, then a name equal up to case,
     * accents and punctuation (through the full-text index).
     *
     * @param where the argument named in errors, e.g. {@code config.topicEntities}
     * @throws IllegalArgumentException naming {@code where[i]} for a text that matches no entity
     */
    public List<Node> resolveExplicit(List<String> texts, String where) {
        List<Node> found = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < texts.size(); i++) {
            String text = texts.get(i);
            List<Node> nodes = resolveOne(text);
            if (nodes.isEmpty()) {
                throw new BadArgumentException(where + "[" + i + "]: no entity with id or name '" + text
                        + "' in KG '" + kg + "'");
            }
            for (Node node : nodes) {
                if (seen.add(node.getElementId())) {
                    found.add(node);
                }
            }
        }
        return found;
    }

    private List<Node> resolveOne(String text) {
        List<Node> byId = find("id", text, 1);
        if (!byId.isEmpty()) {
            return byId;
        }
        List<Node> byName = find("name", text, MAX_PER_NAME);
        if (!byName.isEmpty()) {
            return byName;
        }
        return fulltextEqual(words(text));
    }

    /**
     * Entities whose normalised name equals the normalised words, through a full-text phrase query (the
     * analyzer lowercases but keeps accents and inner apostrophes, so the phrase keeps them too).
     */
    private List<Node> fulltextEqual(List<String> words) {
        if (words.isEmpty()) {
            return List.of();
        }
        String phrase = String.join(" ", words);
        String normalized = normalize(phrase);
        List<Node> matches = new ArrayList<>();
        // Over-fetch: hits of other KGs sharing the index are dropped after the index call.
        try (Result result = tx.execute(FULLTEXT_QUERY,
                Map.of("query", "\"" + phrase + "\"", "limit", EXPLICIT_FULLTEXT_LIMIT * 4L))) {
            while (result.hasNext() && matches.size() < MAX_PER_NAME) {
                Node node = (Node) result.next().get("node");
                if (kg.equals(node.getProperty("kg", null))
                        && node.getProperty("name", null) instanceof String name && normalize(name).equals(normalized)) {
                    matches.add(node);
                }
            }
        }
        return matches;
    }

    /**
     * The words of {@code text}, case kept; safe inside a Lucene phrase (letters, digits and inner
     * apostrophes only: no operators, no quotes).
     */
    static List<String> words(String text) {
        List<String> words = new ArrayList<>();
        Matcher matcher = WORD.matcher(text);
        while (matcher.find()) {
            words.add(matcher.group());
        }
        return words;
    }

    private List<Node> find(String key, String value, int limit) {
        List<Node> nodes = new ArrayList<>();
        try (ResourceIterator<Node> it = tx.findNodes(ENTITY, "kg", kg, key, value)) {
            while (it.hasNext() && nodes.size() < limit) {
                nodes.add(it.next());
            }
        }
        return nodes;
    }

    private Node last(String key, String value) {
        Node last = null;
        try (ResourceIterator<Node> it = tx.findNodes(ENTITY, "kg", kg, key, value)) {
            while (it.hasNext()) {
                last = it.next();
            }
        }
        return last;
    }

    // -------------------------------------------------------------------------------------- pure pieces

    /**
     * Letters that no Unicode decomposition takes apart but that a user types as plain Latin ("Jud Suss" for
     * "Jud Süß", "Bjorn" for "Bjørn").
     */
    private static final Map<Integer, String> FOLDED = Map.ofEntries(Map.entry((int) 'ß', "ss"),
            Map.entry((int) 'ẞ', "SS"), Map.entry((int) 'æ', "ae"), Map.entry((int) 'Æ', "AE"),
            Map.entry((int) 'œ', "oe"), Map.entry((int) 'Œ', "OE"), Map.entry((int) 'ø', "o"),
            Map.entry((int) 'Ø', "O"), Map.entry((int) 'đ', "d"), Map.entry((int) 'Đ', "D"),
            Map.entry((int) 'ł', "l"), Map.entry((int) 'Ł', "L"), Map.entry((int) 'þ', "th"),
            Map.entry((int) 'Þ', "Th"), Map.entry((int) 'ð', "d"), Map.entry((int) 'Ð', "D"),
            Map.entry((int) 'ı', "i"));

    /** Lower-case words without accents or punctuation, single-spaced ("Schindler's List" -> "schindler s list"). */
    public static String normalize(String text) {
        String decomposed = Normalizer.normalize(text, Normalizer.Form.NFKD);
        StringBuilder plain = new StringBuilder(decomposed.length());
        decomposed.codePoints().filter(cp -> !PyText.isCombining(cp)).forEach(cp -> {
            String folded = FOLDED.get(cp);
            if (folded != null) {
                plain.append(folded);
            } else {
                plain.appendCodePoint(cp);
            }
        });
        String lower = PyText.lower(plain.toString());
        StringBuilder out = new StringBuilder(lower.length());
        boolean inWord = false;
        for (int i = 0; i < lower.length(); ) {
            int cp = lower.codePointAt(i);
            i += Character.charCount(cp);
            // '_' joins words for \w but not here: linking.py turns it into a space first
            if (cp != '_' && PyText.isWord(cp)) {
                if (!inWord && out.length() > 0) {
                    out.append(' ');
                }
                out.appendCodePoint(cp);
                inWord = true;
            } else {
                inWord = false;
            }
        }
        return out.toString();
    }

    /** The question cut at Python whitespace, each piece with its normal form. */
    static List<Token> tokens(String question) {
        List<Token> tokens = new ArrayList<>();
        for (String text : PyText.split(question)) {
            tokens.add(new Token(text, normalize(text)));
        }
        return tokens;
    }

    /** A token is content unless it is punctuation or made only of stop words. */
    static boolean[] content(List<Token> tokens, Set<String> stop) {
        return content(tokens, stop, Set.of());
    }

    /**
     * @param questionStems stems of the KG's question words: "starring" asks as "starred" does
     */
    static boolean[] content(List<Token> tokens, Set<String> stop, Set<String> questionStems) {
        boolean[] content = new boolean[tokens.size()];
        for (int k = 0; k < content.length; k++) {
            String norm = tokens.get(k).norm();
            boolean asks = true;
            for (String w : PyText.split(norm)) {
                asks &= stop.contains(w) || (PyText.length(w) > 3 && questionStems.contains(LinkingWords.stem(w)));
            }
            content[k] = !norm.isEmpty() && !asks;
        }
        return content;
    }

    /** Capitals after the first token, in a question that is not all capitals: then case carries meaning. */
    static boolean hasCase(List<Token> tokens, String question) {
        boolean upper = false;
        for (int k = 1; k < tokens.size() && !upper; k++) {
            upper = tokens.get(k).text().codePoints().anyMatch(Character::isUpperCase);
        }
        return upper && !PyText.isUpper(question);
    }

    /** {@code text} with Lucene query-parser special characters escaped and the operators AND/OR/NOT lower-cased. */
    public static String escapeLucene(String text) {
        String escaped = LUCENE_SPECIAL.matcher(text).replaceAll("\\\\$0");
        StringBuilder out = new StringBuilder(escaped.length());
        int i = 0;
        while (i < escaped.length()) {
            int operator = operatorAt(escaped, i);
            if (operator > 0) {
                out.append(escaped.substring(i, i + operator).toLowerCase(java.util.Locale.ROOT));
                i += operator;
            } else {
                out.append(escaped.charAt(i));
                i++;
            }
        }
        return out.toString();
    }

    /** The length of AND/OR/NOT standing as a whole word at {@code i} (Python's {@code \b}), else 0. */
    private static int operatorAt(String text, int i) {
        if (i > 0 && PyText.isWord(text.codePointBefore(i))) {
            return 0;
        }
        for (String operator : new String[] {"AND", "OR", "NOT"}) {
            int end = i + operator.length();
            if (text.startsWith(operator, i) && (end == text.length() || !PyText.isWord(text.codePointAt(end)))) {
                return operator.length();
            }
        }
        return 0;
    }

    /** Typos tolerated in a name of {@code length} characters: none up to 4, one up to 8, then one per 8 more. */
    public static int allowedEdits(int length) {
        if (length <= 4) {
            return 0;
        }
        if (length <= 8) {
            return 1;
        }
        return 1 + (length - 1) / 8;
    }

    /**
     * Edit distance of {@code a} and {@code b} in which swapping two neighbouring letters is one edit ("Riener",
     * "Reiner": the commonest slip when typing a name), or {@code bound + 1} as soon as it is known to exceed
     * {@code bound}. This is the optimal string alignment distance: no substring is edited twice.
     */
    public static int editDistance(String a, String b, int bound) {
        return editDistance(PyText.codePoints(a), PyText.codePoints(b), bound);
    }

    static int editDistance(int[] a, int[] b, int bound) {
        if (Math.abs(a.length - b.length) > bound) {
            return bound + 1;
        }
        if (Arrays.equals(a, b)) {
            return 0;
        }
        int big = bound + 1;
        int[] beforePrevious = null;
        int[] previous = new int[b.length + 1];
        for (int j = 0; j <= b.length; j++) {
            previous[j] = j <= bound ? j : big;
        }
        for (int i = 1; i <= a.length; i++) {
            int ca = a[i - 1];
            int lo = Math.max(1, i - bound);
            int hi = Math.min(b.length, i + bound);
            int[] current = new int[b.length + 1];
            Arrays.fill(current, big);
            current[0] = i <= bound ? i : big;
            int rowMin = current[0];
            for (int j = lo; j <= hi; j++) {
                int value = previous[j - 1] + (ca != b[j - 1] ? 1 : 0);
                if (previous[j] + 1 < value) {
                    value = previous[j] + 1;
                }
                if (current[j - 1] + 1 < value) {
                    value = current[j - 1] + 1;
                }
                if (beforePrevious != null && j > 1 && ca == b[j - 2] && a[i - 2] == b[j - 1]
                        && beforePrevious[j - 2] + 1 < value) {
                    value = beforePrevious[j - 2] + 1;
                }
                current[j] = value;
                if (value < rowMin) {
                    rowMin = value;
                }
            }
            if (rowMin > bound) {
                return big;
            }
            beforePrevious = previous;
            previous = current;
        }
        return Math.min(previous[b.length], big);
    }

    /**
     * As typed, lower case, Every Word Capitalised, Title Case with minor words lower, First capital; each once,
     * in that order.
     */
    public static List<String> caseVariants(String text) {
        String[] words = text.split(" ", -1);
        StringBuilder capitalised = new StringBuilder();
        StringBuilder title = new StringBuilder();
        for (int k = 0; k < words.length; k++) {
            String w = words[k];
            if (k > 0) {
                capitalised.append(' ');
                title.append(' ');
            }
            capitalised.append(PyText.capitalizeFirst(w));
            title.append(k > 0 && MINOR.contains(PyText.lower(w)) ? w : PyText.capitalizeFirst(w));
        }
        LinkedHashSet<String> variants = new LinkedHashSet<>(List.of(text, PyText.lower(text),
                capitalised.toString(), title.toString(), PyText.capitalizeFirst(text)));
        return new ArrayList<>(variants);
    }

    /** Strings to look up by exact name -> the spans they come from, in the order linking.py builds them. */
    static Map<String, List<SpanRef>> exactLookups(List<Token> tokens) {
        Map<String, List<SpanRef>> lookups = new LinkedHashMap<>();
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).norm().isEmpty()) {
                continue;
            }
            for (int j = i + 1; j <= Math.min(tokens.size(), i + MAX_SPAN_TOKENS); j++) {
                if (tokens.get(j - 1).norm().isEmpty()) {
                    continue;
                }
                String raw = join(tokens, i, j);
                // linking.py iterates a set here; the order cannot matter: a lookup string names one entity
                // name, and entities with different names never tie in resolve
                Set<String> typed = new LinkedHashSet<>(List.of(raw, PyText.strip(raw, OUTER_PUNCT),
                        PyText.rstrip(raw, OUTER_PUNCT), PyText.lstrip(raw, OUTER_PUNCT)));
                // "Wayne's World's writer": the name is the span without its possessive
                for (String text : List.copyOf(typed)) {
                    String bare = withoutPossessive(PyText.rstrip(text, OUTER_PUNCT));
                    if (bare != null) {
                        typed.add(bare);
                    }
                }
                for (String text : typed) {
                    if (text.isEmpty()) {
                        continue;
                    }
                    for (String variant : caseVariants(text)) {
                        lookups.computeIfAbsent(variant, v -> new ArrayList<>())
                                .add(new SpanRef(i, j, typed.contains(variant), false));
                    }
                }
                // "westerns", "comedies": a plural of a singular name
                for (String singular : singulars(PyText.strip(raw, OUTER_PUNCT))) {
                    for (String variant : caseVariants(singular)) {
                        lookups.computeIfAbsent(variant, v -> new ArrayList<>()).add(new SpanRef(i, j, false, true));
                    }
                }
            }
        }
        return lookups;
    }

    /** {@code text} without a final possessive ("World's" -> "World"), or null when it has none. */
    static String withoutPossessive(String text) {
        for (String suffix : new String[] {"'s", "\u2019s", "'S", "\u2019S"}) {
            if (text.endsWith(suffix) && text.length() > suffix.length() + 1) {
                return text.substring(0, text.length() - suffix.length());
            }
        }
        return null;
    }

    /**
     * Singular forms of a span whose last word is an English plural of four letters or more: "westerns" ->
     * "western", "comedies" -> "comedy", "boxes" -> "box"/"boxe". Words in -ss, -us, -is and possessives are no plurals.
     */
    static List<String> singulars(String text) {
        int space = text.lastIndexOf(' ');
        String last = text.substring(space + 1);
        String lower = PyText.lower(last);
        if (PyText.length(lower) < 4 || !lower.endsWith("s") || lower.endsWith("ss") || lower.endsWith("us")
                || lower.endsWith("is") || lower.endsWith("'s") || lower.endsWith("\u2019s")
                || !Character.isLetter(lower.charAt(lower.length() - 2))) {
            return List.of();
        }
        String head = text.substring(0, space + 1);
        List<String> out = new ArrayList<>();
        if (lower.endsWith("ies")) {
            out.add(head + last.substring(0, last.length() - 3) + "y");
        }
        if (lower.endsWith("es")) {
            out.add(head + last.substring(0, last.length() - 2));
        }
        out.add(head + last.substring(0, last.length() - 1));
        return out;
    }

    /**
     * One OR query over the words of the question ("" when it has no content word). Content words count
     * fully and longer ones become fuzzy terms ({@code word~1}, {@code ~2} from 8 letters: a typed word may
     * have lost a letter); question words count a little ({@code the^0.2}), so that long names made mostly
     * of them ("We're No Angels") still rank. Each word goes both normalised and as typed (lower-case,
     * accents and inner apostrophes kept, as the analyzer indexes "O'Hara" and "Chéri"), always escaped.
     */
    static String luceneQuery(List<Token> tokens, boolean[] content) {
        boolean any = false;
        for (boolean c : content) {
            any |= c;
        }
        if (!any) {
            return "";
        }
        Set<String> terms = new LinkedHashSet<>();
        for (int k = 0; k < tokens.size() && terms.size() < MAX_QUERY_TERMS; k++) {
            Token t = tokens.get(k);
            String typed = PyText.lower(PyText.strip(t.text(), OUTER_PUNCT));
            Set<String> forms = new LinkedHashSet<>(PyText.split(t.norm()));
            if (!typed.isEmpty() && !typed.equals(t.norm())) {
                forms.add(typed);
            }
            for (String w : forms) {
                if (!content[k]) {
                    terms.add(escapeLucene(w) + "^0.2");
                    continue;
                }
                int length = PyText.length(w);
                int edits = length < 4 ? 0 : length < 8 ? 1 : 2;
                terms.add(edits > 0 ? escapeLucene(w) + "~" + edits : escapeLucene(w));
            }
        }
        return String.join(" ", terms);
    }

    /** A span of the question as linking.py compares it with a name: normalised words, with and without spaces. */
    private record Window(int start, int end, String spaced) {
    }

    /** Each full-text hit placed on the span of the question it matches best, if one matches closely. */
    static List<Candidate> align(List<Hit> hits, List<Token> tokens) {
        return align(hits, tokens, word -> false, word -> false);
    }

    /**
     * @param common whether a (normalised) word is in so many of the KG's names that it does not pick one out:
     *     a span that names a hit's other words ("Microsoft" for "Microsoft Corporation") names the hit
     */
    static List<Candidate> align(List<Hit> hits, List<Token> tokens, java.util.function.Predicate<String> common,
                                 java.util.function.Predicate<String> english) {
        Map<String, Window> windows = new HashMap<>();
        Map<Integer, List<String>> byLength = new HashMap<>();
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).norm().isEmpty()) {
                continue;
            }
            for (int j = i + 1; j <= Math.min(tokens.size(), i + MAX_SPAN_TOKENS); j++) {
                if (tokens.get(j - 1).norm().isEmpty()) {
                    continue;
                }
                StringBuilder spaced = new StringBuilder();
                for (int k = i; k < j; k++) {
                    String norm = tokens.get(k).norm();
                    if (!norm.isEmpty()) {
                        if (spaced.length() > 0) {
                            spaced.append(' ');
                        }
                        spaced.append(norm);
                    }
                }
                List<String> forms = new ArrayList<>(List.of(spaced.toString()));
                String bare = withoutPossessive(PyText.rstrip(tokens.get(j - 1).text(), OUTER_PUNCT));
                if (bare != null && spaced.toString().endsWith(" s")) { // "wayne s world s" -> "wayne s world"
                    forms.add(spaced.substring(0, spaced.length() - 2));
                }
                for (String form : forms) {
                    String squeezed = form.replace(" ", "");
                    if (!squeezed.isEmpty() && !windows.containsKey(squeezed)) {
                        windows.put(squeezed, new Window(i, j, form));
                        byLength.computeIfAbsent(PyText.length(squeezed), n -> new ArrayList<>()).add(squeezed);
                    }
                }
            }
        }
        List<Candidate> out = new ArrayList<>();
        for (Hit hit : hits) {
            String spacedTarget = normalize(hit.name());
            String target = spacedTarget.replace(" ", "");
            if (target.isEmpty()) {
                continue;
            }
            Window found = windows.get(target);
            double quality;
            String how;
            if (found != null) {
                quality = found.spaced().equals(spacedTarget) ? 0.95 : 0.93;
                how = "fulltext";
            } else {
                int[] targetPoints = PyText.codePoints(target);
                int length = targetPoints.length;
                int bound = allowedEdits(length);
                Set<Integer> letters = new HashSet<>();
                for (int cp : targetPoints) {
                    letters.add(cp);
                }
                int bestDistance = -1;
                String bestWindow = null;
                for (int n = length - bound; n <= length + bound; n++) {
                    for (String window : byLength.getOrDefault(n, List.of())) {
                        int[] points = PyText.codePoints(window);
                        // cheap necessary conditions first: a typo rarely hits both ends of a name, and each
                        // edit changes at most two letters of the alphabet used
                        if ((points[0] != targetPoints[0] && points[points.length - 1] != targetPoints[length - 1])
                                || symmetricDifference(letters, points) > 2 * bound) {
                            continue;
                        }
                        int d = editDistance(points, targetPoints, bound);
                        if (d <= bound && (bestWindow == null || d < bestDistance)) {
                            bestDistance = d;
                            bestWindow = window;
                        }
                    }
                }
                if (bestWindow == null) {
                    Candidate head = head(hit, spacedTarget, windows, common);
                    Candidate partial = head == null ? partial(hit, spacedTarget, tokens) : head;
                    // a common word typed in lower case is that word: "the lead singer" is not Bryan Singer
                    if (partial != null && !("partial".equals(partial.how) && typedCommon(tokens.get(partial.start),
                            english))) {
                        out.add(partial);
                    }
                    continue;
                }
                found = windows.get(bestWindow);
                // ... and a correctly spelt one is not a typo of a name: "movie" is not "B movie"
                Window typed = windows.get(bestWindow);
                if (typed.end() - typed.start() == 1 && typedCommon(tokens.get(typed.start()), english)) {
                    continue;
                }
                quality = 1 - 1.5 * bestDistance / length;
                how = "fuzzy";
            }
            out.add(new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), how, quality,
                    hit.degree(), hit.types()));
        }
        return out;
    }

    private static boolean typedCommon(Token token, java.util.function.Predicate<String> english) {
        return english.test(token.norm()) && !PyText.firstIsUpper(PyText.lstrip(token.text(), OUTER_PUNCT));
    }

    /**
     * A name said without its common words: "Microsoft" for "Microsoft Corporation", "Portuguese" for
     * "Portuguese Language" (words many of the KG's names share say little about which one is meant). The
     * rest of the name, in order, must be a span of the question. Null when it is not, or when nothing is left.
     */
    static Candidate head(Hit hit, String spacedTarget, Map<String, Window> windows,
                          java.util.function.Predicate<String> common) {
        List<String> words = PyText.split(spacedTarget);
        List<String> rest = new ArrayList<>();
        for (String w : words) {
            if (!common.test(w) && !MINOR.contains(w)) {
                rest.add(w);
            }
        }
        if (rest.isEmpty() || rest.size() == words.size()) {
            return null;
        }
        Window found = windows.get(String.join("", rest));
        if (found == null || !found.spaced().equals(String.join(" ", rest))) {
            return null;
        }
        return new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), "head", HEAD_MATCH,
                hit.degree(), hit.types());
    }

    /**
     * A name typed as its initials ("USA", "usa", "U.S.A."), for the KG's best-connected names whose
     * initials it learned ({@link LinkingWords}); only a token typed in capitals, or in a question without
     * any, and not a question word.
     */
    private List<Candidate> initials(List<Token> tokens, boolean[] content, boolean hasCase) {
        Map<String, List<String>> known = learned().initials();
        if (known.isEmpty()) {
            return List.of();
        }
        List<Candidate> out = new ArrayList<>();
        for (int k = 0; k < tokens.size(); k++) {
            String letters = tokens.get(k).norm().replace(" ", "");
            String typed = PyText.strip(tokens.get(k).text(), OUTER_PUNCT);
            boolean capitals = !typed.isEmpty() && typed.chars().filter(Character::isLetter).allMatch(Character::isUpperCase);
            if (!content[k] || letters.length() < 2 || !known.containsKey(letters) || (hasCase && !capitals)) {
                continue;
            }
            for (String id : known.get(letters)) {
                // ids are unique within a KG only: the same dump loaded twice shares them
                for (Node node : find("id", id, 1)) {
                    out.add(new Candidate(node, id, nameOf(node), k, k + 1, "initials", INITIALS_MATCH,
                            node.getDegree(), typesOf(node)));
                }
            }
        }
        return out;
    }

    /**
     * A person named by the last word of their name, possibly misspelt ("Herzog", "Hitchcok"): the hit's name
     * must read like a person's (two to four capitalised words, not starting with an article or a minor word),
     * and one word of the question must match its last word. Null when none does.
     */
    static Candidate partial(Hit hit, String spacedTarget, List<Token> tokens) {
        List<String> nameWords = PyText.split(hit.name());
        List<String> normWords = PyText.split(spacedTarget);
        if (nameWords.size() < 2 || nameWords.size() > 4 || normWords.size() != nameWords.size()
                || MINOR.contains(normWords.get(0))) {
            return null;
        }
        for (String w : nameWords) {
            if (!PyText.firstIsUpper(w)) {
                return null;
            }
        }
        int[] last = PyText.codePoints(normWords.get(normWords.size() - 1));
        if (last.length < 4 || PyText.isDigits(normWords.get(normWords.size() - 1))) {
            return null;
        }
        int bound = allowedEdits(last.length);
        int bestToken = -1;
        int bestDistance = bound + 1;
        for (int k = 0; k < tokens.size(); k++) {
            String norm = tokens.get(k).norm();
            if (norm.isEmpty() || norm.contains(" ")) {
                continue;
            }
            int[] points = PyText.codePoints(norm);
            if (points[0] != last[0]) {
                continue;
            }
            int d = editDistance(points, last, bound);
            if (d < bestDistance) {
                bestDistance = d;
                bestToken = k;
            }
        }
        if (bestToken < 0) {
            return null;
        }
        // the fewer words around the surname, the likelier a person ("Werner Herzog", not "Portrait Werner Herzog")
        return new Candidate(hit.node(), hit.id(), hit.name(), bestToken, bestToken + 1, "partial",
                PARTIAL_MATCH - 0.06 * (nameWords.size() - 2) - 1.5 * bestDistance / last.length, hit.degree(),
                hit.types());
    }

    private static int symmetricDifference(Set<Integer> letters, int[] window) {
        Set<Integer> other = new HashSet<>();
        for (int cp : window) {
            other.add(cp);
        }
        int count = 0;
        for (int cp : other) {
            if (!letters.contains(cp)) {
                count++;
            }
        }
        for (int cp : letters) {
            if (!other.contains(cp)) {
                count++;
            }
        }
        return count;
    }

    /** Crude stems (first four letters of words of four letters or more): "starred", "star" -> "star". */
    static Set<String> stems(Iterable<String> texts) {
        Set<String> stems = new HashSet<>();
        for (String text : texts) {
            for (String w : PyText.split(text)) {
                if (PyText.length(w) >= 4) {
                    stems.add(PyText.prefix(w, 4));
                }
            }
        }
        return stems;
    }

    /**
     * How likely the span means the entity: match quality times name-likeness of the span. Sets and returns
     * {@code c.score}, which may exceed 1 after the nudges (ranked as is, reported capped at 1). The
     * operations run in linking.py's order: the scores are compared after rounding to 3 decimals.
     */
    static double score(Candidate c, List<Token> tokens, boolean[] content, boolean hasCase, Set<String> cues) {
        int contentChars = 0;
        int stopChars = 0;
        int contentWords = 0;
        for (int k = c.start; k < c.end; k++) {
            int chars = PyText.length(tokens.get(k).norm().replace(" ", ""));
            if (content[k]) {
                contentChars += chars;
                contentWords++;
            } else {
                stopChars += chars;
            }
        }
        // a name said by its head counts the words said: "Germany" is not the longer "Germany national team"
        int nameWords = "head".equals(c.how) ? Math.max(c.end - c.start, 1)
                : Math.max(PyText.split(normalize(c.name)).size(), 1);
        // Longer names are less likely to be accidental: saturating in characters and in words.
        double weight = contentChars + 0.4 * stopChars;
        double score = c.match * (1 - 0.55 * Math.exp(-weight / 6) - 0.15 * Math.exp(-(nameWords - 1)));
        // Capitals, when the question has any: sentence-initial words say nothing, so they are skipped.
        List<Boolean> capital = new ArrayList<>();
        for (int k = c.start; k < c.end; k++) {
            Token t = tokens.get(k);
            boolean judged = (content[k] || contentWords == 0) && !t.norm().isEmpty() && k > 0
                    && !(k > c.start && MINOR.contains(t.norm()));
            if (judged) {
                capital.add(PyText.firstIsUpper(PyText.lstrip(t.text(), OUTER_PUNCT)) || PyText.firstIsDigit(t.norm()));
            }
        }
        boolean capitalised = hasCase && !capital.isEmpty() && !capital.contains(false);
        c.capitalised = capitalised;
        // a capitalised word next to the span: the name typed goes on ("The Other" in "The Other Woman")
        boolean standsAlone = capitalised && !capitalisedAt(tokens, c.start - 1) && !capitalisedAt(tokens, c.end);
        if (contentWords == 0) { // only question words ("what", "movies", "star"): rarely the entity meant ...
            // ... unless typed with its capitals mid-sentence, exactly as the entity is named ("the director of Up")
            boolean typedName = standsAlone && "exact".equals(c.how) && c.match >= 1.0;
            score *= typedName ? 1.0 : capitalised ? 0.6 : 0.25;
        }
        // A surname alone ("Herzog") is a name only when typed as one: capitalised, in a question that uses
        // case; a question typed all in lower case ("what did spielberg direct") cannot say, so it counts less.
        if ("partial".equals(c.how) && !standsAlone) {
            score = hasCase ? 0 : score * 0.85;
        }
        // A name said without its common words ("Microsoft") only when typed as a name: an ordinary word
        // ("just curious") is not "Curious George".
        if ("head".equals(c.how) && !capitalised) {
            score = 0;
        }
        // A content word right next to the span suggests the name goes on ("Bad Boy" in "Bad Boy Buby").
        for (int k : new int[] {c.start - 1, c.end}) {
            if (k >= 0 && k < tokens.size() && content[k]) {
                score *= 0.85;
            }
        }
        if (capitalised) {
            score *= 1.12;
        } else if (hasCase && !capital.isEmpty() && !capital.contains(true)) {
            score *= 0.88;
        }
        // The question talks about one of the entity's relations ("star" -> starred_actors): a small nudge that
        // decides between namesakes ("lee pace" the tag, "Lee Pace" the actor) and little else.
        if (!cues.isEmpty() && !c.types.isEmpty()) {
            List<String> relationTexts = new ArrayList<>();
            for (String type : c.types) {
                relationTexts.add(normalize(RELATION_SEPARATORS.matcher(type).replaceAll(" ")));
            }
            Set<String> relationStems = stems(relationTexts);
            relationStems.retainAll(cues);
            if (!relationStems.isEmpty()) {
                score *= 1.03;
            }
        }
        c.score = score;
        return score;
    }

    /** Whether token {@code k} exists, is not the first of the question, and starts with a capital. */
    private static boolean capitalisedAt(List<Token> tokens, int k) {
        return k >= 1 && k < tokens.size() && PyText.firstIsUpper(PyText.lstrip(tokens.get(k).text(), OUTER_PUNCT));
    }

    /** Best first, no two chosen spans overlapping, no entity twice, weak leftovers dropped. */
    static List<Link> resolve(List<Candidate> candidates, List<Token> tokens, int maxEntities) {
        return resolve(candidates, tokens, maxEntities, SECONDARY_RATIO);
    }

    static List<Link> resolve(List<Candidate> candidates, List<Token> tokens, int maxEntities, double secondaryRatio) {
        List<Candidate> ordered = new ArrayList<>(candidates);
        Map<Candidate, Double> rounded = new HashMap<>();
        for (Candidate c : candidates) {
            rounded.put(c, PyText.round(c.score, 3));
        }
        // linking.py's key (-round(score, 3), -(span length), -degree, name) in a stable sort
        ordered.sort((x, y) -> {
            double rx = rounded.get(x);
            double ry = rounded.get(y);
            if (rx != ry) {
                return rx > ry ? -1 : 1;
            }
            int byLength = Integer.compare(y.end - y.start, x.end - x.start);
            if (byLength != 0) {
                return byLength;
            }
            int byDegree = Integer.compare(y.degree, x.degree);
            return byDegree != 0 ? byDegree : PyText.compare(x.name, y.name);
        });
        List<Candidate> chosen = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int spans = 0; // maxEntities counts spans of the question: twins share their span's place
        for (Candidate c : ordered) {
            if (c.score < MIN_SCORE) {
                break;
            }
            // A literal value or a shared value said exactly ("in 1987", "horror films") and a name typed with its
            // capitals are what the question states, not guesses: short ones score low, but they are kept beside
            // a stronger name.
            if (!chosen.isEmpty() && c.score < secondaryRatio * chosen.get(0).score && !isLiteral(c)
                    && !isSharedValue(c) && !isTypedName(c)) {
                continue;
            }
            if (seen.contains(c.id)) {
                continue;
            }
            // Same words, other entity ("ringo lam" the tag, "Ringo Lam" the person): both stand, best first.
            boolean twin = false;
            boolean overlaps = false;
            int twins = 0;
            for (Candidate o : chosen) {
                boolean sameName = o.start == c.start && o.end == c.end && normalize(o.name).equals(normalize(c.name));
                twin |= sameName && c.score >= TWIN_RATIO * o.score;
                twins += sameName ? 1 : 0;
                overlaps |= c.start < o.end && o.start < c.end;
            }
            if (twin ? twins >= MAX_TWINS : overlaps || spans >= maxEntities) {
                continue;
            }
            chosen.add(c);
            seen.add(c.id);
            spans += twin ? 0 : 1;
        }
        List<Link> links = new ArrayList<>(chosen.size());
        for (Candidate c : chosen) {
            links.add(new Link(c.node, c.id, c.name, PyText.round(Math.min(c.score, 1.0), 4), c.how,
                    PyText.strip(join(tokens, c.start, c.end), OUTER_PUNCT)));
        }
        return links;
    }

    /** One word said exactly (or as its plural) that names an entity many facts touch: a genre, a language. */
    static boolean isSharedValue(Candidate c) {
        return ("exact".equals(c.how) || "singular".equals(c.how)) && c.end - c.start == 1
                && c.degree >= SHARED_VALUE_DEGREE;
    }

    /** A name typed with its capitals in a question that uses case, matched closely ("Bullitt", "Diane Keaotn"). */
    static boolean isTypedName(Candidate c) {
        return c.capitalised && c.match >= 0.6;
    }

    /** An exact match of a number node ("1994", "7.5"): a year, a rating, a count. */
    static boolean isLiteral(Candidate c) {
        return "exact".equals(c.how) && PyText.isDigits(c.name.replace(".", "").replace(",", ""));
    }

    // ------------------------------------------------------------------------------------------ helpers

    private static String join(List<Token> tokens, int start, int end) {
        StringBuilder out = new StringBuilder();
        for (int k = start; k < end; k++) {
            if (k > start) {
                out.append(' ');
            }
            out.append(tokens.get(k).text());
        }
        return out.toString();
    }

    /** {@code str(node.id)}, as linking.py reports it. */
    private static String idOf(Node node) {
        return pythonStr(node.getProperty("id", null));
    }

    private static String nameOf(Node node) {
        return pythonStr(node.getProperty("name", null));
    }

    private static String pythonStr(Object value) {
        return value == null ? "None" : String.valueOf(value);
    }

    private static List<String> typesOf(Node node) {
        List<String> types = new ArrayList<>();
        for (RelationshipType type : node.getRelationshipTypes()) {
            types.add(type.name());
        }
        return types;
    }
}
