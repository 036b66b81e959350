package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelFileCacheTest {

    @TempDir
    Path dir;

    @Test
    void aFileIsReadOncePerVersionAndAMissingOneIsTheFallback() throws IOException {
        AtomicInteger reads = new AtomicInteger();
        ModelFileCache<String> cache = new ModelFileCache<>(file -> {
            reads.incrementAndGet();
            try {
                return Files.readString(file);
            } catch (IOException e) {
                return "unreadable";
            }
        });
        Path file = dir.resolve("model.json");
        assertEquals("none", cache.get(file, "none"));
        Files.writeString(file, "v1");
        Files.setLastModifiedTime(file, FileTime.fromMillis(1_000_000));
        String first = cache.get(file, "none");
        assertEquals("v1", first);
        assertSame(first, cache.get(file, "none"));
        assertEquals(1, reads.get());
        // replaced while the database runs: the new version is read, once
        Files.writeString(file, "v2");
        Files.setLastModifiedTime(file, FileTime.fromMillis(2_000_000));
        assertEquals("v2", cache.get(file, "none"));
        assertEquals("v2", cache.get(file, "none"));
        assertEquals(2, reads.get());
        Files.delete(file);
        assertEquals("none", cache.get(file, "none"));
    }
}
