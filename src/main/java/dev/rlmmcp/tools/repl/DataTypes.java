package dev.rlmmcp.tools.repl;

import dev.rlmmcp.core.DataType;
import java.util.Arrays;
import java.util.List;

final class DataTypes {

    static final List<String> NAMES = Arrays.stream(DataType.values()).map(DataType::wireName).toList();

    private DataTypes() {
    }
}
