package io.kgqa.procedures.simgrag;

import java.util.Set;

/** What the matcher needs of a knowledge graph: the relationships at a node, and a stable key per node. */
public interface KgView<N> {

    /** One relationship seen from a node: its type, the node at the other end, and whether it leaves the node. */
    record Hop<N>(String type, N other, boolean outgoing) {
    }

    interface HopConsumer<N> {
        void accept(Hop<N> hop);
    }

    /** Every relationship of {@code node} whose type is in {@code types} ({@code null}: any type), in both directions. */
    void forEachHop(N node, Set<String> types, HopConsumer<N> consumer);

    /** A key that orders tied matches the same way on every run. */
    String key(N node);
}
