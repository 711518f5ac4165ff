collect_ignore = ["corpus"]  # deliberately flawed task files, not tests of this project
