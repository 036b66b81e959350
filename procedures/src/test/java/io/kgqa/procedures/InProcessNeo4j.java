package io.kgqa.procedures;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.internal.kernel.api.exceptions.ProcedureException;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * An in-process Neo4j for tests, shaped like neo4j-harness's
 * {@code Neo4jBuilders.newInProcessBuilder().withProcedure(..).withFunction(..).build()}.
 *
 * <p>Why not the harness itself: Neo4j did not publish {@code org.neo4j.test:neo4j-harness:5.26.19}
 * to Maven Central, and the tests must run on exactly the pinned engine. This uses the embedded
 * DBMS from the provided {@code org.neo4j:neo4j} artefact and registers the classes the same way
 * the harness does (through {@link GlobalProcedures}). No Bolt port is opened.
 *
 * <p>Starting Neo4j costs seconds, so test classes whose procedures do not depend on graph
 * contents share one instance per test JVM through {@link #shared}; a class that needs its own
 * data builds a private one with {@link #builder}.
 */
public final class InProcessNeo4j implements AutoCloseable {

    /** The per-JVM instance behind {@link #shared}; test code only, guarded by the class lock. */
    private static InProcessNeo4j shared;

    private final Set<Class<?>> registered = new HashSet<>();

    private final Path home;
    private final DatabaseManagementService managementService;
    private final GraphDatabaseService database;

    private InProcessNeo4j(Path home, DatabaseManagementService managementService, GraphDatabaseService database) {
        this.home = home;
        this.managementService = managementService;
        this.database = database;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The shared instance, started on first use and shut down when the test JVM exits, with the
     * procedures and functions of {@code pluginClasses} registered (each class once).
     */
    public static synchronized InProcessNeo4j shared(Class<?>... pluginClasses) {
        if (shared == null) {
            shared = builder().build();
            InProcessNeo4j instance = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(instance::close, "kgqa-test-neo4j-shutdown"));
        }
        for (Class<?> pluginClass : pluginClasses) {
            if (shared.registered.add(pluginClass)) {
                register(shared.database, List.of(pluginClass), List.of(pluginClass));
            }
        }
        return shared;
    }

    /** The default database, for {@code executeTransactionally}. */
    public GraphDatabaseService database() {
        return database;
    }

    /** Runs a read query and returns every row as a map. */
    /**
     * The constraints and indexes {@code kgqa load} creates that the linker and the procedures rely on
     * (entity key, name lookups, the full-text name index), waited for.
     */
    public InProcessNeo4j withEntitySchema() {
        for (String schema : List.of(
                "CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.kg, e.id) IS UNIQUE",
                "CREATE INDEX entity_kg_name IF NOT EXISTS FOR (e:Entity) ON (e.kg, e.name)",
                "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]",
                "CREATE CONSTRAINT relation_key IF NOT EXISTS FOR (r:Relation) REQUIRE (r.kg, r.name) IS UNIQUE",
                "CREATE CONSTRAINT kg_name IF NOT EXISTS FOR (k:KG) REQUIRE k.name IS UNIQUE")) {
            database().executeTransactionally(schema);
        }
        database().executeTransactionally("CALL db.awaitIndexes(60)");
        return this;
    }

    public List<Map<String, Object>> rows(String query, Map<String, Object> parameters) {
        return database.executeTransactionally(query, parameters, result -> {
            List<Map<String, Object>> rows = new ArrayList<>();
            result.forEachRemaining(rows::add);
            return rows;
        });
    }

    /** Runs a query expected to return exactly one value in one row. */
    public Object single(String query, Map<String, Object> parameters) {
        List<Map<String, Object>> rows = rows(query, parameters);
        if (rows.size() != 1 || rows.get(0).size() != 1) {
            throw new IllegalStateException("expected one row with one column, got " + rows);
        }
        return rows.get(0).values().iterator().next();
    }

    @Override
    public void close() {
        managementService.shutdown();
        deleteRecursively(home);
    }

    private static void deleteRecursively(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void register(GraphDatabaseService database, List<Class<?>> procedures, List<Class<?>> functions) {
        GlobalProcedures registry = ((GraphDatabaseAPI) database)
                .getDependencyResolver().resolveDependency(GlobalProcedures.class);
        try {
            for (Class<?> procedureClass : procedures) {
                registry.registerProcedure(procedureClass);
            }
            for (Class<?> functionClass : functions) {
                registry.registerFunction(functionClass);
            }
        } catch (ProcedureException e) {
            throw new IllegalStateException("Cannot register kgqa procedures: " + e.getMessage(), e);
        }
    }

    public static final class Builder {
        private final List<Class<?>> procedures = new ArrayList<>();
        private final List<Class<?>> functions = new ArrayList<>();

        public Builder withProcedure(Class<?> procedureClass) {
            procedures.add(procedureClass);
            return this;
        }

        public Builder withFunction(Class<?> functionClass) {
            functions.add(functionClass);
            return this;
        }

        public InProcessNeo4j build() {
            Path home;
            try {
                home = Files.createTempDirectory("kgqa-neo4j-test");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                    .setConfig(BoltConnector.enabled, false)
                    // Small page cache: the tests hold no graph data, and CI machines are shared.
                    .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(16))
                    .build();
            GraphDatabaseService database = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            try {
                register(database, procedures, functions);
            } catch (RuntimeException e) {
                service.shutdown();
                throw e;
            }
            return new InProcessNeo4j(home, service, database);
        }
    }
}
