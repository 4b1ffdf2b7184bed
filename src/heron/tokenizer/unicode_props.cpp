#include "heron/tokenizer/unicode_props.h"

#include <unicode/uchar.h>

#include "heron/tokenizer/utf8.h"

namespace heron::tokenizer::unicode {
namespace {

// True when `c` was assigned in Unicode `major`.0 or earlier.
bool assigned_by(char32_t c, uint8_t major) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] != 0 && age[0] <= major;
}

int8_t category(char32_t c) {
  return u_charType(static_cast<UChar32>(c));
}

}  // namespace

bool is_white_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const int8_t t = category(c);
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}

bool is_punctuation_v8(char32_t c) {
  if (c < 0x80) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
  }
  const int8_t t = category(c);
  const bool p = t == U_DASH_PUNCTUATION || t == U_START_PUNCTUATION || t == U_END_PUNCTUATION ||
                 t == U_CONNECTOR_PUNCTUATION || t == U_OTHER_PUNCTUATION ||
                 t == U_INITIAL_PUNCTUATION || t == U_FINAL_PUNCTUATION;
  return p && assigned_by(c, 8);
}

bool is_control_v8(char32_t c) {
  const int8_t t = category(c);
  if (t == U_CONTROL_CHAR) return true;  // all assigned in 1.1
  const bool other = t == U_FORMAT_CHAR || t == U_PRIVATE_USE_CHAR || t == U_SURROGATE;
  return other && assigned_by(c, 8);
}

bool is_nonspacing_mark_v8(char32_t c) {
  return c >= 0x300 && category(c) == U_NON_SPACING_MARK && assigned_by(c, 8);
}

bool is_combining_mark_v9(char32_t c) {
  if (c < 0x300) return false;
  const int8_t t = category(c);
  const bool mark =
      t == U_NON_SPACING_MARK || t == U_COMBINING_SPACING_MARK || t == U_ENCLOSING_MARK;
  return mark && assigned_by(c, 9);
}

bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void append_lowercase(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    return;
  }
  // The one unconditional multi-character lowercase mapping (SpecialCasing.txt).
  if (c == 0x130) {
    out += "i\xCC\x87";
    return;
  }
  utf8::append(out, static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))));
}

}  // namespace heron::tokenizer::unicode
