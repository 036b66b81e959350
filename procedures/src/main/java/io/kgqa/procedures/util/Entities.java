package io.kgqa.procedures.util;

import org.neo4j.graphdb.Node;

/** What every namespace shows of an {@code :Entity} node in its rows. */
public final class Entities {

    private Entities() {
    }

    /** The entity's name, or its id when it has none (a KG may name only some of its entities). */
    public static String name(Node entity) {
        return String.valueOf(entity.getProperty("name", entity.getProperty("id", "")));
    }
}
