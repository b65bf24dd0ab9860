"""Change control (DESIGN section 13): change windows, holds and notifications."""
