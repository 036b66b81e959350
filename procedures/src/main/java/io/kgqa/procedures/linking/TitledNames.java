package io.kgqa.procedures.linking;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * A title said right before a person's name ("president kennedy", "coach belichick"): the title is a value many people
 * hold, and the KG says which of the name's namesakes holds it (John F. Kennedy, not George Kennedy, has the
 * office President). That holder is the one meant, and the question is about him: he scores at least what the
 * title scored, and the title, which says what he is, goes behind him, still linked.
 */
final class TitledNames {

    /** Namesakes on the span after a title checked for an edge to it, best first, at most. */
    static final int MAX_HOLDERS_CHECKED = 10;

    private TitledNames() {
    }

    /**
     * Lifts the holders of every title said before them; scores only change. Needs {@code ordinary} set
     * ({@link LinkScoring#yieldToNames}).
     */
    static void apply(Collection<Candidate> candidates) {
        List<Candidate> titles = new ArrayList<>();
        for (Candidate c : candidates) {
            // a title is an ordinary word ("president"), not a name typed with its capitals
            if (c.score >= LinkScoring.MIN_SCORE && c.ordinary && SpanResolver.isSharedValue(c)) {
                titles.add(c);
            }
        }
        for (Candidate title : titles) {
            List<Candidate> after = new ArrayList<>();
            for (Candidate c : candidates) {
                // a person holds a title ("france play" is no title before the film "State of Play")
                if (c.start == title.end && c != title && c.node != null && HitAlignment.personLike(c.name)) {
                    after.add(c);
                }
            }
            after.sort(Comparator.comparingDouble((Candidate c) -> -c.score));
            List<Candidate> holders = new ArrayList<>();
            for (Candidate c : after.subList(0, Math.min(MAX_HOLDERS_CHECKED, after.size()))) {
                if (Qualifiers.related(c, title)) {
                    holders.add(c);
                }
            }
            if (holders.isEmpty()) {
                continue;
            }
            double said = title.score;
            for (Candidate holder : holders) {
                holder.score = Math.max(holder.score, said);
            }
            title.score = said * LinkScoring.ORDINARY_WORDS_BESIDE_NAME;
        }
    }
}
