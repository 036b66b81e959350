package io.kgqa.procedures.util;

/**
 * The bounds every {@code kgqa.*} procedure shares, one constant each, so that a number like "3 entities" cannot
 * drift between the linker, the retrievers and the Python side. {@link TextLimits} bounds the text a caller
 * sends; these bound what a question may pull out of the graph.
 *
 * <p>core/limits.py holds the same numbers for the Python side ({@code kgqa ask} links before it retrieves, and
 * must link what a Cypher call links); tests/test_limits.py fails when the two disagree.
 */
public final class Limits {

    /**
     * Topic entities linked from a question when the caller names none: kgqa.link.entities' default, and what
     * every retriever links. More spans cost linking time and rarely help: a question names one or two things.
     */
    public static final int LINKED_ENTITIES = 3;

    /** The most spans {@code kgqa.link.entities} links when asked for more (its config.maxEntities). */
    public static final int MAX_LINKED_ENTITIES = 20;

    /**
     * Rows one question may pull out of the graph by default: SubgraphRAG's candidate triples, GSR's and SG-RAG's
     * paths per chain. Far above what a 2-hop question over MetaQA reaches, low enough that a hub (a genre, a
     * year) cannot hold a transaction's memory; each procedure lets a caller raise it in its config.
     */
    public static final int ROW_CAP = 20_000;

    private Limits() {
    }
}
