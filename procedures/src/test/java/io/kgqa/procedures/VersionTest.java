package io.kgqa.procedures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VersionTest {

    private InProcessNeo4j neo4j;

    @BeforeAll
    void startNeo4j() {
        // Pure functions of their arguments: no graph data, so the shared instance is enough.
        neo4j = InProcessNeo4j.shared(Version.class);
    }

    @Test
    void versionFunctionReturnsThePomVersion() {
        // Surefire passes ${project.version}; a missing property means the test ran outside Maven.
        String expected = System.getProperty("kgqa.expectedVersion");
        assertNotNull(expected, "run through Maven so kgqa.expectedVersion is set");
        assertEquals(expected, neo4j.single("RETURN kgqa.version() AS version", Map.of()));
    }

    @Test
    void versionIsResolvedFromTheFilteredResource() {
        assertEquals(System.getProperty("kgqa.expectedVersion"), Version.resolveVersion());
    }
}
