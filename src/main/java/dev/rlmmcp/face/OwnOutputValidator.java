package dev.rlmmcp.face;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.util.Map;

/**
 * Checks our tool schemas once, at start-up, but does not re-validate every reply against its
 * output schema: the replies are built by our own tools (the tests check them against the schemas
 * through a real client), and the SDK's check would copy, validate and re-serialise each one.
 */
final class OwnOutputValidator implements JsonSchemaValidator {

    private final JsonSchemaValidator schemas = McpJsonDefaults.getSchemaValidator();

    @Override
    public ValidationResponse validateSchema(Map<String, Object> schema) {
        return schemas.validateSchema(schema);
    }

    @Override
    public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
        return ValidationResponse.asValid(null);
    }
}
