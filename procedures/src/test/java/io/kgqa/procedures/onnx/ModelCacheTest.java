package io.kgqa.procedures.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelCacheTest {

    /** Stands in for an OrtSession: counts loads and closes. */
    static final class Fake implements AutoCloseable {
        final int generation;
        volatile boolean closed;

        Fake(int generation) {
            this.generation = generation;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    @TempDir
    Path dir;

    @Test
    void loadsOnceAndReloadsWhenTheFileChanges() throws Exception {
        Path model = Files.writeString(dir.resolve("model.onnx"), "v1");
        AtomicInteger loads = new AtomicInteger();
        ModelCache<Fake> cache = new ModelCache<>();
        ModelCache.Loader<Fake> loader = d -> new Fake(loads.incrementAndGet());

        Fake first;
        try (ModelCache.Lease<Fake> lease = cache.acquire(dir, List.of(model), loader)) {
            first = lease.get();
        }
        try (ModelCache.Lease<Fake> lease = cache.acquire(dir, List.of(model), loader)) {
            assertSame(first, lease.get());
        }
        assertEquals(1, loads.get());

        // A new model installed: different content and mtime.
        ModelCache.Lease<Fake> inFlight = cache.acquire(dir, List.of(model), loader);
        Files.writeString(model, "version 2");
        Files.setLastModifiedTime(model, FileTime.fromMillis(System.currentTimeMillis() + 5_000));
        try (ModelCache.Lease<Fake> lease = cache.acquire(dir, List.of(model), loader)) {
            assertEquals(2, lease.get().generation);
        }
        assertEquals(2, loads.get());
        assertFalse(first.closed, "the old model stays open while a query still holds it");
        inFlight.close();
        assertTrue(first.closed, "and is closed when the last lease is released");
        assertEquals(1, cache.size());
    }

    @Test
    void missingFileIsReported() {
        ModelCache<Fake> cache = new ModelCache<>();
        assertThrows(NoSuchFileException.class,
                () -> cache.acquire(dir, List.of(dir.resolve("absent.onnx")), d -> new Fake(1)));
    }

    @Test
    void concurrentFirstCallsLoadOnce() throws Exception {
        Path model = Files.writeString(dir.resolve("model.onnx"), "v1");
        AtomicInteger loads = new AtomicInteger();
        ModelCache<Fake> cache = new ModelCache<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> results = new java.util.ArrayList<>();
            for (int i = 0; i < 32; i++) {
                results.add(pool.submit(() -> {
                    try (ModelCache.Lease<Fake> lease = cache.acquire(dir, List.of(model), d -> {
                        Thread.sleep(20);
                        return new Fake(loads.incrementAndGet());
                    })) {
                        return lease.get().generation;
                    }
                }));
            }
            for (Future<Integer> result : results) {
                assertEquals(1, result.get(10, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, loads.get());
        cache.clear();
        assertEquals(0, cache.size());
    }
}
