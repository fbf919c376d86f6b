# cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=name -P embed_file.cmake
# Writes a C++ source defining `extern const unsigned char SYMBOL[]` (the file's bytes, then a NUL) and
# `extern const std::size_t SYMBOL_size` (without the NUL), in namespace ncpkit.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" length)
math(EXPR size "${length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Line breaks every 32 bytes keep the generated file readable by editors and compilers.
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.\n"
  "#include <cstddef>\n"
  "namespace ncpkit {\n"
  "extern const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\n"
  "extern const std::size_t ${SYMBOL}_size = ${size};\n"
  "}  // namespace ncpkit\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
