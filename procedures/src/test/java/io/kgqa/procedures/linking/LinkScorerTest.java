package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The learned link scorer's file and probability, and the features it reads. */
class LinkScorerTest {

    private static Map<String, Object> model(List<String> names, List<Double> weights, double bias) {
        Map<String, Object> data = new HashMap<>();
        data.put("features", new ArrayList<Object>(names));
        data.put("weights", new ArrayList<Object>(weights));
        data.put("bias", bias);
        data.put("floor", 0.2);
        return data;
    }

    @Test
    void weightsAreReadByNameInTheFilesOwnOrder() {
        List<String> names = new ArrayList<>(LinkFeatures.NAMES);
        Collections.reverse(names);
        List<Double> weights = names.stream().map(n -> n.equals("log_degree") ? 2.0 : 0.0).toList();
        LinkScorer scorer = LinkScorer.parse(model(names, weights, -1.0));
        assertNotNull(scorer);
        double[] features = new double[LinkFeatures.NAMES.size()];
        features[LinkFeatures.NAMES.indexOf("log_degree")] = 0.5;
        assertEquals(0.5, scorer.probability(features), 1e-12); // sigmoid(-1 + 2 * 0.5)
        assertEquals(0.2, scorer.floor());
    }

    @Test
    void aFileOfOtherFeaturesOrWithoutNumbersIsNotAScorer() {
        LinkScorer none = LinkScorer.parse(Map.of());
        assertSame(none, LinkScorer.parse(model(List.of("hand_score"), List.of(1.0), 0)));
        List<String> names = LinkFeatures.NAMES;
        List<Object> weights = new ArrayList<>(Collections.nCopies(names.size(), (Object) 1.0));
        weights.set(0, "x");
        Map<String, Object> data = model(names, List.of(), 0);
        data.put("weights", weights);
        assertSame(none, LinkScorer.parse(data));
    }

    @Test
    void theBetterConnectedOfTwoEntitiesOnOneSpanIsMarkedAndTheOtherLiesBelowIt() {
        List<LinkText.Token> tokens = LinkText.tokens("where was lincoln born");
        Candidate famous = new Candidate(null, "a", "Abraham Lincoln", 2, 3, "head", 0.9, 999, List.of());
        Candidate town = new Candidate(null, "t", "Lincoln", 2, 3, "exact", 1.0, 9, List.of());
        famous.score = 0.5;
        town.score = 0.6;
        LinkFeatures.set(List.of(famous, town), tokens, false);
        int onSpan = LinkFeatures.NAMES.indexOf("most_connected_on_span");
        int below = LinkFeatures.NAMES.indexOf("degree_to_span_best");
        int share = LinkFeatures.NAMES.indexOf("name_share");
        assertEquals(LinkFeatures.NAMES.size(), famous.features.length);
        assertEquals(1.0, famous.features[onSpan]);
        assertEquals(0.0, town.features[onSpan]);
        assertEquals(0.0, famous.features[below]);
        assertEquals(-0.5, town.features[below], 1e-12); // log10(10 / 1000) / 4
        assertEquals(0.5, famous.features[share]);
        assertEquals(1.0, town.features[share]);
        assertTrue(town.features[LinkFeatures.NAMES.indexOf("hand_best")] == 1.0);
    }
}
