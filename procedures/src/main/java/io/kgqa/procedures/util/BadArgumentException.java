package io.kgqa.procedures.util;

import org.neo4j.kernel.api.exceptions.Status;

/**
 * An argument of a {@code kgqa.*} call the caller got wrong; the message names it ({@code config.k},
 * {@code question}, {@code kg}) and says what was expected.
 *
 * <p>Why not a plain {@link IllegalArgumentException}: Neo4j reports an exception without a status as "Failed to
 * invoke procedure `…`: Caused by: java.lang.IllegalArgumentException: …". One that carries its status is
 * reported by its message alone, so a Cypher user reads one line about their call and no Java class name. The
 * status is the one Neo4j gives a failed procedure call anyway (Neo.ClientError.Procedure.ProcedureCallFailed),
 * so clients that look at the code see no change.
 */
public final class BadArgumentException extends IllegalArgumentException implements Status.HasStatus {

    /**
     * Line breaks (from a caller's own text quoted in the message) are escaped: the message stays one line. So is
     * '%', doubled: Neo4j passes a status-carrying exception's message to {@code String.format} as the format
     * (ProcedureCompilation.rethrowProcedureException), so a caller's "%r" quoted here would otherwise end the
     * call in UnknownFormatConversionException, a DatabaseError, instead of this message (found by the fuzz test
     * of issue 30). The caller reads the message with single '%' again.
     */
    public BadArgumentException(String message) {
        super(String.valueOf(message).replace("\r", "\\r").replace("\n", "\\n").replace("%", "%%"));
    }

    /** The message as the caller reads it through Neo4j (each '%' once). */
    public String text() {
        return getMessage().replace("%%", "%");
    }

    @Override
    public Status status() {
        return Status.Procedure.ProcedureCallFailed;
    }
}
