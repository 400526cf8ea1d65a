// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* yaml_limits.c: the nesting depth of a YAML text, by libyaml's events. */
#include <errno.h>
#include <stdbool.h>
#include <yaml.h>
#include "agent/yaml_limits.h"

int yaml_limits__check_depth(const char *text, size_t len, unsigned max_depth, size_t *line)
{
	yaml_parser_t parser;
	unsigned depth = 0;
	bool done = false;
	int err = 0;

	*line = 0;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && !err) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR)
				err = -ENOMEM;
			break; /* a syntax error: the document parser says where */
		}
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > max_depth) {
				*line = ev.start_mark.line + 1;
				err = -E2BIG;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return err;
}
