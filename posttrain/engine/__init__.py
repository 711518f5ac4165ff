"""Inference engines behind one interface (`InferenceEngine`)."""
