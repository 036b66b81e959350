package io.kgqa.procedures.linking;

import java.util.List;
import org.neo4j.graphdb.Node;

/** An (entity, span) pair proposed by one of the lookups; {@code score} is set by {@link LinkScoring#score}. */
final class Candidate {
    final Node node;
    final String id;
    final String name;
    final int start; // token index, inclusive
    final int end; // token index, exclusive
    /** exact, singular, fulltext, fuzzy, head, distinctive, prefix, derived, partial, short, initials or vector. */
    final String how;
    final double match; // quality of the string match, in [0, 1]
    final int degree; // breaks ties between equally good names
    final List<String> types; // relationship types of the entity
    double score;
    /** What {@link LinkScoring} scored, kept beside a learned {@link #score}: the resolver's ratios read it. */
    double handScore = Double.NaN;
    /** The learned scorer's features ({@link LinkFeatures}), set when the KG has one or they are asked for. */
    double[] features;
    boolean questionWordsOnly; // the span holds none of the question's content words (set by score)
    boolean capitalised; // every judged word of the span capitalised, in a question with case (set by score)
    boolean spelledWithoutCase; // two or more content words, in a question typed without capitals (set by score)
    boolean ordinary; // the span is common English words typed as such (set by LinkScoring.yieldToNames)

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

    /** The score the resolver's floor and ratios compare: the hand score, also when a learned one ranks. */
    double thresholdScore() {
        return Double.isNaN(handScore) ? score : handScore;
    }

    @Override
    public String toString() {
        return name + "[" + start + "," + end + ")" + how + " match=" + match + " score=" + score;
    }
}
