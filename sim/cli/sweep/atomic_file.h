#pragma once
// Files a sweep writes while it may be interrupted at any moment.
#include <string>

namespace wafersim::cli::sweep {

// Writes `text` to `path` through a temporary file in the same folder and a
// rename: a reader, or a sweep resumed after a kill, sees the whole file or
// none. Failure throws CommandError (exit code 2).
void write_file_atomically(const std::string& path, const std::string& text);

// Appends `text` with one write, so a row is never interleaved with another.
void append_to_file(const std::string& path, const std::string& text);

// Removes the temporary files an interrupted sweep may have left in `folder`.
void remove_temporary_files(const std::string& folder);

// The name a point's temporary files carry: "<name>.tmp" or "<name>.tmp-XXXXXX".
bool is_temporary_name(const std::string& file_name);

}  // namespace wafersim::cli::sweep
