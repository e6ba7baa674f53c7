package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.json.schema.jackson2.DefaultJsonSchemaValidator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real step replies, from a real kernel, against the schema derived from the record they are made from. */
class StepReplySchemaTest {

    private static final Map<String, Object> SCHEMA = ReplySchema.of(StepReply.class);
    private final JsonSchemaValidator validator = new DefaultJsonSchemaValidator(new ObjectMapper());

    @TempDir
    Path dir;

    private Sessions sessions;
    private Settings settings;

    @BeforeEach
    void start() {
        settings = TestSettings.in(dir, 1L << 20);
        sessions = new Sessions(new KernelFactory(settings, new ProcessLauncher(), new ObjectMapper()));
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private ObjectNode step(Session session, String code, Duration timeout) {
        ObjectNode reply = Replies.step(session.execute(StepRequest.of(code, timeout)), sessions.settings());
        JsonSchemaValidator.ValidationResponse check = validator.validate(SCHEMA, reply);
        assertThat(check.valid())
                .as("%s\nagainst the schema: %s", reply, check.errorMessage())
                .isTrue();
        return reply;
    }

    @Test
    void everyKindOfStepMatchesTheSchemaDerivedFromItsRecord() {
        Session session = sessions.create("schema", Limits.NONE);
        assertThat(step(session, "x = 1\nprint(x)", Duration.ofSeconds(10))
                        .path("status")
                        .asText())
                .isEqualTo("ok");
        assertThat(step(session, "1 / 0", Duration.ofSeconds(10))
                        .path("error")
                        .path("type")
                        .asText())
                .isEqualTo("ZeroDivisionError");
        assertThat(step(session, "print('y' * 5000)", Duration.ofSeconds(10)).has("truncated"))
                .isTrue();
        assertThat(step(session, "import time\ntime.sleep(30)", Duration.ofSeconds(1))
                        .path("status")
                        .asText())
                .isEqualTo("interrupted");
        step(session, "big = 'z' * 700_000", Duration.ofSeconds(10));
        assertThat(step(session, "more = 'w' * 700_000", Duration.ofSeconds(10)).has("memory_note"))
                .isTrue();
        ObjectNode crashed = step(session, "import os\nos._exit(3)", Duration.ofSeconds(10));
        assertThat(crashed.path("status").asText()).isEqualTo("crashed");
        assertThat(crashed.path("variables_lost").asBoolean()).isTrue();
    }

    @Test
    void aDriftBetweenReplyAndRecordFailsTheSchema() {
        Session session = sessions.create("schema", Limits.NONE);
        ObjectNode reply = step(session, "x = 1", Duration.ofSeconds(10));
        reply.put("variables_unsaved", "an internal field");
        assertThat(validator.validate(SCHEMA, reply).valid()).isFalse();
    }
}
