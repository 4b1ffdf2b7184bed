#pragma once
// Character classes as HF `tokenizers` computes them. Its Rust crates carry Unicode
// tables of different ages, and the differences show on newer characters, so each
// predicate here names the version it reproduces (ICU supplies the data, u_charAge the
// cut-off).
#include <string>

namespace heron::tokenizer::unicode {

// Rust char::is_whitespace (White_Space, current Unicode).
bool is_white_space(char32_t c);
// Rust char::is_numeric (general category N*, current Unicode).
bool is_numeric(char32_t c);
// unicode_categories (Unicode 8.0): P* — used with ASCII punctuation by BERT splitting.
bool is_punctuation_v8(char32_t c);
// unicode_categories (Unicode 8.0) is_other without Cn: Cc, Cf, Co, Cs.
bool is_control_v8(char32_t c);
// unicode_categories (Unicode 8.0): Mn.
bool is_nonspacing_mark_v8(char32_t c);
// unicode-normalization-alignments (Unicode 9.0) is_combining_mark: M*.
bool is_combining_mark_v9(char32_t c);
// BERT's "Chinese character" blocks.
bool is_cjk_ideograph(char32_t c);
// Rust char::to_lowercase, appended as UTF-8 (one character can become two).
void append_lowercase(std::string& out, char32_t c);

}  // namespace heron::tokenizer::unicode
