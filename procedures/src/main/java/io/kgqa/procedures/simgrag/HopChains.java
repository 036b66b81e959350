package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.simgrag.PatternTokens.Token;
import io.kgqa.procedures.simgrag.RelationWords.Mention;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * How the relation words of a question become hops: neighbouring words of one relation are one group (a round
 * trip when bound to the entity or next to a sharing cue), each group goes to the entity it belongs to, and an
 * entity's groups leave it in the order English attaches them (see {@link OfflinePatternBuilder}).
 */
final class HopChains {

    static final int CUE_WINDOW = 3;
    private static final Set<String> COORDINATION = Set.of("and", "or", "both", "&", "as", "well");
    private static final Set<String> ATTACHING = Set.of("by", "in", "of", "from", "with", "for", "on");

    /** Neighbouring words of one relation, and the hops they make (2: out to the entity's neighbour and back). */
    record Group(List<Mention> mentions, int hops) {
        String relation() {
            return mentions.get(0).relation();
        }
    }

    private HopChains() {
    }

    /** @param cuesMakeRoundTrips false with several entities: "both", "together" then join them, not a hop back */
    static List<Group> groups(List<Token> tokens, List<Mention> mentions, boolean cuesMakeRoundTrips) {
        List<List<Mention>> runs = new ArrayList<>();
        for (Mention m : mentions) {
            List<Mention> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last.get(last.size() - 1).relation().equals(m.relation())) {
                last.add(m);
            } else {
                runs.add(new ArrayList<>(List.of(m)));
            }
        }
        boolean[] cue = new boolean[runs.size()];
        for (int c = 0; c < tokens.size(); c++) {
            String t = tokens.get(c).text();
            if (tokens.get(c).entity() >= 0 || !(RelationWords.CUES.contains(t) || t.equals("co-"))) {
                continue;
            }
            int best = -1;
            int bestDistance = Integer.MAX_VALUE;
            for (int g = 0; g < runs.size(); g++) {
                int cc = c;
                int d = runs.get(g).stream().mapToInt(m -> Math.abs(m.pos() - cc)).min().orElse(Integer.MAX_VALUE);
                if (d <= CUE_WINDOW && d < bestDistance) {
                    bestDistance = d;
                    best = g;
                }
            }
            if (best >= 0 && cuesMakeRoundTrips) {
                cue[best] = true;
            }
        }
        // "who acted with X", "who worked with X": a relation word and "with" the entity is a shared relation
        for (int c = 1; c + 1 < tokens.size() && cuesMakeRoundTrips; c++) {
            if (tokens.get(c).entity() < 0 && tokens.get(c).text().equals("with") && tokens.get(c + 1).entity() >= 0) {
                for (int g = 0; g < runs.size(); g++) {
                    int before = c - 1;
                    if (runs.get(g).stream().anyMatch(m -> m.pos() == before)) {
                        cue[g] = true;
                    }
                }
            }
        }
        List<Group> out = new ArrayList<>();
        for (int g = 0; g < runs.size(); g++) {
            List<Mention> run = runs.get(g);
            boolean roundTrip = (run.size() > 1 && run.stream().anyMatch(Mention::bound)) || cue[g];
            out.add(new Group(run, roundTrip ? 2 : 1));
        }
        return out;
    }

    /** The entity a word's preposition points at ("directed by [the] X", "released in X"), else -1. */
    static int agentOf(List<Token> tokens, Group g) {
        for (Mention m : g.mentions()) {
            int j = m.pos() + 1;
            if (j < tokens.size() && tokens.get(j).entity() < 0 && ATTACHING.contains(tokens.get(j).text())) {
                j++;
                if (j < tokens.size() && tokens.get(j).text().equals("the")) {
                    j++;
                }
                if (j < tokens.size() && tokens.get(j).entity() >= 0) {
                    return tokens.get(j).entity();
                }
            }
        }
        return -1;
    }

    static int distance(Group g, int pos) {
        return g.mentions().stream().mapToInt(m -> Math.abs(m.pos() - pos)).min().orElse(Integer.MAX_VALUE);
    }

    /** The relations of the hops leaving an entity at {@code pos}, in order (see the class comment). */
    static List<String> chain(List<Token> tokens, List<Group> groups, int pos) {
        List<Group> ordered = new ArrayList<>(groups);
        ordered.sort(Comparator.comparingInt((Group g) -> rank(tokens, g, pos)[0])
                .thenComparingInt(g -> rank(tokens, g, pos)[1]));
        List<String> out = new ArrayList<>();
        for (Group g : ordered) {
            for (int h = 0; h < g.hops(); h++) {
                out.add(g.relation());
            }
        }
        return out;
    }

    static int[] rank(List<Token> tokens, Group g, int pos) {
        if (g.mentions().stream().anyMatch(m -> m.bound() && m.pos() > pos)) {
            return new int[] {0, 0}; // "the Kismet actors", "Kismet directed films"
        }
        if (g.mentions().stream().anyMatch(m -> m.pos() < pos && (m.bound() || pointsAt(tokens, m, pos)))) {
            return new int[] {1, 0}; // "the director of Kismet", "films written by Kismet"
        }
        if (g.mentions().stream().anyMatch(m -> m.pos() == pos + 1)) {
            return new int[] {2, 0}; // "the films Kismet starred in"
        }
        int left = g.mentions().stream().filter(m -> m.pos() < pos).mapToInt(m -> pos - m.pos()).min().orElse(-1);
        if (left >= 0) {
            return new int[] {3, left};
        }
        return new int[] {4, g.mentions().stream().mapToInt(m -> m.pos() - pos).min().orElse(0)};
    }

    /** Whether a word reaches the entity at {@code pos} through a preposition ("written by [the] X"). */
    private static boolean pointsAt(List<Token> tokens, Mention m, int pos) {
        int j = m.pos() + 1;
        if (j >= tokens.size() || !ATTACHING.contains(tokens.get(j).text())) {
            return false;
        }
        j++;
        if (j < tokens.size() && tokens.get(j).text().equals("the")) {
            j++;
        }
        return j == pos;
    }

    static boolean coordinated(List<Token> tokens, int a, int b) {
        int lo = Math.min(a, b);
        int hi = Math.max(a, b);
        if (hi - lo < 2) {
            return false;
        }
        for (int i = lo + 1; i < hi; i++) {
            if (!COORDINATION.contains(tokens.get(i).text())) {
                return false;
            }
        }
        return true;
    }

}
