package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the learned link scorer ({@link LinkScorer}) reads of one (entity, span) candidate, beside the hand score:
 * how the name was matched, how well known the entity is next to the others the same words name (the prior of
 * fame: people shorten the names of the entities they know), whether the span is ordinary words or question
 * words, where it stands in the question. The names are the model file's contract with {@code kgqa train all}
 * ({@code kgqa.link.candidates} streams them): a model whose names differ is not read.
 */
final class LinkFeatures {

    private LinkFeatures() {
    }

    static final List<String> HOWS = List.of("exact", "singular", "fulltext", "fuzzy", "head", "distinctive",
            "prefix", "derived", "partial", "short", "initials", "vector");

    static final List<String> NAMES;

    static {
        List<String> names = new ArrayList<>(List.of("hand_score", "hand_share", "hand_best", "match"));
        for (String how : HOWS) {
            names.add("how_" + how);
        }
        names.addAll(List.of("log_degree", "most_connected_on_span", "degree_to_span_best",
                "most_connected_of_name", "degree_to_name_best", "rivals_on_span", "span_words", "name_words",
                "name_share", "short_mention_fame", "question_words_only", "ordinary", "capitalised", "has_case",
                "literal", "shared_value", "asked_kind", "before_of", "after_of", "inside_longer", "at_start",
                "span_letters"));
        NAMES = List.copyOf(names);
    }

    /** Degrees span orders of magnitude: log10, over this, is about 1 for the best-connected entities. */
    private static final double LOG_DEGREE_SCALE = 4.0;
    private static final double WORDS_SCALE = 5.0;
    private static final double LETTERS_SCALE = 20.0;

    /**
     * Sets {@link Candidate#features} of every candidate, each read against the others (the best hand score, the
     * entities the same span or name also names). Needs the hand scores, {@code ordinary} and {@code capitalised}.
     */
    static void set(Collection<Candidate> candidates, List<Token> tokens, boolean hasCase) {
        double best = 0;
        Map<List<Integer>, Integer> spanBest = new HashMap<>();
        Map<List<Integer>, Integer> spanCount = new HashMap<>();
        Map<String, Integer> nameBest = new HashMap<>();
        for (Candidate c : candidates) {
            best = Math.max(best, c.score);
            spanBest.merge(List.of(c.start, c.end), c.degree, Math::max);
            spanCount.merge(List.of(c.start, c.end), 1, Integer::sum);
            nameBest.merge(LinkText.nameWords(c.name), c.degree, Math::max);
        }
        int asked = LinkScoring.askedKindStart(tokens);
        for (Candidate c : candidates) {
            List<Integer> span = List.of(c.start, c.end);
            int spanWords = c.end - c.start;
            int nameWords = Math.max(LinkText.split(LinkText.normalize(c.name)).size(), 1);
            double share = Math.min(1.0, (double) spanWords / nameWords);
            double logDegree = Math.log10(1.0 + Math.max(c.degree, 0)) / LOG_DEGREE_SCALE;
            int letters = 0;
            for (int k = c.start; k < c.end; k++) {
                letters += LinkText.length(tokens.get(k).norm().replace(" ", ""));
            }
            boolean insideLonger = false;
            for (Candidate o : candidates) {
                boolean contains = o.start <= c.start && c.end <= o.end && o.end - o.start > spanWords;
                insideLonger |= contains && o.score >= LinkScoring.MIN_SCORE;
            }
            List<Double> f = new ArrayList<>(NAMES.size());
            f.add(Math.min(c.score, 1.5));
            f.add(best > 0 ? c.score / best : 0);
            f.add(best > 0 && c.score >= best ? 1.0 : 0.0);
            f.add(c.match);
            for (String how : HOWS) {
                f.add(how.equals(c.how) ? 1.0 : 0.0);
            }
            f.add(logDegree);
            f.add(c.degree >= spanBest.get(span) ? 1.0 : 0.0);
            f.add(ratio(c.degree, spanBest.get(span)));
            int byName = nameBest.get(LinkText.nameWords(c.name));
            f.add(c.degree >= byName ? 1.0 : 0.0);
            f.add(ratio(c.degree, byName));
            f.add(Math.log1p(spanCount.get(span) - 1));
            f.add(Math.min(1.0, spanWords / WORDS_SCALE));
            f.add(Math.min(1.0, nameWords / WORDS_SCALE));
            f.add(share);
            f.add(logDegree * (1 - share));
            f.add(c.questionWordsOnly ? 1.0 : 0.0);
            f.add(c.ordinary ? 1.0 : 0.0);
            f.add(c.capitalised ? 1.0 : 0.0);
            f.add(hasCase ? 1.0 : 0.0);
            f.add(SpanResolver.isLiteral(c) ? 1.0 : 0.0);
            f.add(SpanResolver.isSharedValue(c) ? 1.0 : 0.0);
            f.add(c.start == asked ? 1.0 : 0.0);
            f.add(c.end < tokens.size() && "of".equals(tokens.get(c.end).norm()) ? 1.0 : 0.0);
            f.add(c.start > 0 && "of".equals(tokens.get(c.start - 1).norm()) ? 1.0 : 0.0);
            f.add(insideLonger ? 1.0 : 0.0);
            f.add(c.start == 0 ? 1.0 : 0.0);
            f.add(Math.min(1.0, letters / LETTERS_SCALE));
            double[] values = new double[f.size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = f.get(i);
            }
            c.features = values;
        }
    }

    /** log10 of how much less connected than the best: 0 for the best, -1 for a tenth of its facts. */
    private static double ratio(int degree, int best) {
        return Math.log10((1.0 + Math.max(degree, 0)) / (1.0 + Math.max(best, 0))) / LOG_DEGREE_SCALE;
    }
}
